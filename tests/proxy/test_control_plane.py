"""Reward hacking: the control plane has its own listener and token, a harness cannot reach it, records
are private, and credentials never appear on the command line."""

import asyncio
import os
import signal
import stat
import subprocess
import sys
import time

import httpx
import pytest
from click.testing import CliRunner

from forge_eval._cli.proxy import proxy as proxy_cli
from forge_eval._errors import UsageError
from forge_eval.proxy import (
    HttpProxyControl,
    ProxyConfig,
    ScriptedUpstream,
    ServerThread,
    create_app,
    create_control_app,
    free_port,
    read_calls,
    read_rollout,
    serve_in_task,
    serve_in_thread,
)
from forge_eval.sandbox import RolloutOutcome
from tests.proxy.conftest import ADMIN, SECRET

CONTROL_ROUTES = [
    ("POST", "/rollouts"),
    ("GET", "/rollouts"),
    ("GET", "/rollouts/victim"),
    ("DELETE", "/rollouts/victim"),
    ("POST", "/rollouts/victim/reward"),
    ("POST", "/rollouts/victim/status"),
    ("GET", "/rollouts/victim/calls"),
    ("POST", "/admin/pause"),
    ("POST", "/admin/resume"),
    ("POST", "/admin/weights"),
]


def test_a_harness_holding_its_key_cannot_reach_the_control_plane(proxy):
    created = proxy.rollout("victim")
    harness_key = created["api_key"]
    with httpx.Client(base_url=proxy.url) as client:
        for credential in (harness_key, proxy.config.admin_key):  # even the admin key: no such routes
            for prefix in ("", created["base_path"], "/v1"):
                for method, path in CONTROL_ROUTES:
                    headers = {"Authorization": f"Bearer {credential}", "x-api-key": credential}
                    answer = client.request(method, prefix + path, json={"reward": 1.0}, headers=headers)
                    assert answer.status_code in (404, 405), (method, prefix + path, answer.status_code)
                    assert answer.json()["error"]["message"]
    for credential in (harness_key, SECRET, "guess"):  # the control listener wants the admin key only
        answer = httpx.post(
            proxy.control_url + "/rollouts/victim/reward",
            json={"reward": 1.0},
            headers={"Authorization": f"Bearer {credential}"},
        )
        assert answer.status_code == 401
    assert read_rollout(proxy.records, "victim").reward is None
    assert proxy.admin("POST", "/rollouts/victim/reward", json={"reward": 0.5}).is_success
    assert read_rollout(proxy.records, "victim").reward == 0.5


def test_the_admin_key_is_separate_from_the_secret(tmp_path):
    generated = ProxyConfig(records_dir=tmp_path, secret="s")
    assert generated.admin_key and generated.admin_key != "s"
    assert ProxyConfig(records_dir=tmp_path, secret="s").admin_key != generated.admin_key
    with pytest.raises(ValueError, match="must differ"):
        ProxyConfig(records_dir=tmp_path, secret="same", admin_key="same")


def test_records_are_private(proxy):
    created = proxy.rollout("private")
    httpx.post(
        proxy.url + created["base_path"] + "/v1/chat/completions",
        json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
    ).raise_for_status()
    proxy.admin("POST", "/rollouts/private/status", json={"status": "exited"}).raise_for_status()
    attempt = proxy.records / "private" / "0"
    for path in (proxy.records / "private", attempt):
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, path
    for path in (attempt / "calls.jsonl", attempt / "rollout.json"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


def test_control_plane_on_a_private_unix_socket(tmp_path):
    with serve_in_thread(ScriptedUpstream().app()) as upstream:
        app = create_app(ProxyConfig(records_dir=tmp_path / "r", secret="s", upstreams=[upstream.url]))
        sock = tmp_path / "control.sock"
        server = ServerThread(app, control=create_control_app(app), control_uds=sock).start()
        try:
            assert server.control_url == f"unix:{sock}"
            assert stat.S_IMODE(sock.stat().st_mode) == 0o600
            control = HttpProxyControl(server.control_url, str(app.state.proxy.config.admin_key))

            async def main() -> str:
                try:
                    return (await control.create_rollout({"rollout_id": "uds"})).base_path
                finally:
                    await control.aclose()

            assert asyncio.run(main()) == "/r/uds/0"
        finally:
            server.stop()


def test_in_process_control_needs_no_listener(tmp_path):
    """`HttpProxyControl.in_process`: the trainer side inside the serving event loop (as `forge-eval run`
    does per sample), over the real scripted upstream."""

    async def main(upstream_url: str) -> None:
        app = create_app(ProxyConfig(records_dir=tmp_path, secret="s", upstreams=[upstream_url]))
        control = HttpProxyControl.in_process(create_control_app(app), app.state.proxy.config.admin_key)
        async with serve_in_task(app) as url:
            created = await control.create_rollout({"rollout_id": "inproc", "group_uid": "g"})
            async with httpx.AsyncClient() as client:
                answer = await client.post(
                    url + created.base_path + "/v1/chat/completions",
                    json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
                )
            assert answer.status_code == 200
            await control.report("inproc", 0, RolloutOutcome(status="exited", exit_code=0, reward=1.0))
            record, calls = await control.fetch("inproc", 0)
            assert record.reward == 1.0 and [c.seq for c in calls] == [0]
            await control.aclose()

    with serve_in_thread(ScriptedUpstream().app()) as upstream:
        asyncio.run(main(upstream.url))


def test_credentials_on_the_command_line_are_refused():
    for flag, variable in (("--secret", "FORGE_PROXY_SECRET"), ("--admin-key", "FORGE_PROXY_ADMIN_KEY")):
        result = CliRunner().invoke(
            proxy_cli, ["serve", "--upstream", "http://127.0.0.1:9/v1", flag, "s3cret"]
        )
        assert isinstance(result.exception, UsageError) and result.exception.exit_code == 2
        assert "/proc/PID/cmdline" in str(result.exception) and variable in str(result.exception)


def _wait_healthy(url: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise AssertionError(f"proxy did not start: {process.stderr.read().decode()[-2000:]}")


def test_a_restarted_proxy_resumes_rollouts_keys_and_seq(upstream, scripted, tmp_path):
    """kill -9, restart on the same records: the harness key keeps working and seq goes on; the
    generated admin key (0600, in the records directory) is reused; a released rollout stays gone."""
    records = tmp_path / "records"
    port, control_port = free_port(), free_port()
    url, control = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{control_port}"
    argv = [sys.executable, "-m", "forge_eval._cli.main", "proxy", "serve", "--upstream", upstream[1].url]
    argv += ["--port", str(port), "--control-port", str(control_port), "--records", str(records)]
    argv += ["--host", "0.0.0.0"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("FORGE_PROXY_")}
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    started = []
    try:
        for run in range(2):
            process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
            started.append(process)
            _wait_healthy(url, process)
            admin = {"Authorization": f"Bearer {(records / '.admin-key').read_text().strip()}"}
            if run == 0:
                assert stat.S_IMODE((records / ".admin-key").stat().st_mode) == 0o600
                assert stat.S_IMODE((records / ".secret").stat().st_mode) == 0o600
                key = httpx.post(control + "/rollouts", json={"rollout_id": "r"}, headers=admin).json()[
                    "api_key"
                ]
                httpx.post(
                    control + "/rollouts", json={"rollout_id": "done"}, headers=admin
                ).raise_for_status()
                httpx.delete(control + "/rollouts/done", headers=admin).raise_for_status()
            for _ in range(2):
                answer = httpx.post(url + "/v1/chat/completions", json=body, headers={"x-api-key": key})
                assert answer.status_code == 200, answer.text
            listed = httpx.get(control + "/rollouts", headers=admin).json()["rollouts"]
            assert [r["rollout"]["rollout_id"] for r in listed] == ["r"]
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=10)
        warning = started[0].stderr.read().decode()
        assert "warning: --host 0.0.0.0" in warning and "control plane stays on 127.0.0.1" in warning
    finally:
        for process in started:
            process.kill()
            process.wait()
    assert [c.seq for c in read_calls(records, "r")] == [0, 1, 2, 3]
    assert read_calls(records, "done") == []
    assert ADMIN["Authorization"] not in " ".join(argv)


def test_a_released_rollout_created_again_goes_on_where_it_stopped_also_after_a_restart(make_proxy, scripted):
    """Release, create again, restart: one rollout with one `seq` sequence and the reward it had, and its
    key keeps working; only a purge starts the attempt afresh."""
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}

    def call(proxy, key: str) -> None:
        answer = httpx.post(proxy.url + "/v1/chat/completions", json=body, headers={"x-api-key": key})
        assert answer.status_code == 200, answer.text

    first = make_proxy()
    key = first.rollout("again", group_uid="g")["api_key"]
    call(first, key)
    call(first, key)
    first.admin("POST", "/rollouts/again/reward", json={"reward": 0.5}).raise_for_status()
    first.admin("DELETE", "/rollouts/again").raise_for_status()
    again = first.admin("POST", "/rollouts", json={"rollout_id": "again", "group_uid": "other"})
    assert again.status_code == 200 and again.json()["api_key"] == key
    assert again.json()["rollout"]["reward"] == 0.5 and again.json()["rollout"]["group_uid"] == "g"
    call(first, key)
    first.server.stop()
    second = make_proxy(records_dir=first.records)  # a restart on the same records
    call(second, key)
    assert [c.seq for c in read_calls(first.records, "again")] == [0, 1, 2, 3]
    assert read_rollout(first.records, "again").reward == 0.5
    second.admin("DELETE", "/rollouts/again?purge=1").raise_for_status()
    assert second.admin("POST", "/rollouts", json={"rollout_id": "again"}).status_code == 201
    call(second, key)
    assert [c.seq for c in read_calls(first.records, "again")] == [0]


def test_sigterm_removes_the_control_socket(upstream, tmp_path):
    sock, port = tmp_path / "control.sock", free_port()
    argv = [sys.executable, "-m", "forge_eval._cli.main", "proxy", "serve", "--upstream", upstream[1].url]
    argv += ["--port", str(port), "--control-socket", str(sock), "--records", str(tmp_path / "records")]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _wait_healthy(f"http://127.0.0.1:{port}", process)
        assert stat.S_ISSOCK(sock.stat().st_mode)
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=20)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == -signal.SIGTERM  # ends as the signal would have, after cleaning up
    assert not sock.exists()
