"""The record writer under failure: a record it cannot write fails only its call (API-shaped), a full file
system never leaves a torn line in front of later records, readers skip and count a torn last line,
a purged rollout re-created writes to its new file, and per-rollout memory stays bounded."""

import asyncio
import errno
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import numpy as np
import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from forge_eval._cli.proxy import proxy as proxy_cli
from forge_eval._errors import ForgeError
from forge_eval.proxy import (
    CanonicalResponse,
    ProxyConfig,
    RecordWriteError,
    RecordWriter,
    UpstreamResult,
    create_app,
    create_control_app,
    free_port,
    load_calls,
    read_calls,
)
from forge_eval.proxy._rollouts import RECENT_REQUESTS
from forge_eval.proxy.records import CallRecord
from tests.proxy.conftest import ADMIN, ADMIN_KEY, SECRET, start_cli_proxy

CHAT = "/v1/chat/completions"


def _call(seq: int, content: str = "hi", rollout_id: str = "w") -> CallRecord:
    return CallRecord(
        call_id=f"c{seq}",
        rollout_id=rollout_id,
        seq=seq,
        api="chat",
        path=CHAT,
        original_request={"messages": [{"role": "user", "content": content}]},
        served_request={},
        t_received=time.time(),
    )


def test_an_unwritable_record_fails_its_call_and_the_writer_keeps_going(tmp_path):
    async def main() -> None:
        writer = RecordWriter(tmp_path)
        await writer.write_call(_call(0))
        with pytest.raises(RecordWriteError, match="could not be serialized"):
            await writer.write_call(_call(1, "half an emoji \ud83d"))  # the writer thread died here before
        await writer.write_call(_call(2))
        assert writer.problem() is None
        writer.close()
        assert writer.problem() and "closed" in writer.problem()
        with pytest.raises(RecordWriteError, match="closed"):  # refused at once, not a hang
            await writer.write_call(_call(3))

    asyncio.run(main())
    assert [c.seq for c in read_calls(tmp_path, "w")] == [0, 2]


class _SurrogateUpstream:
    """An in-process upstream whose answer holds a lone surrogate (what a broken detokenizer could send):
    stands in for a model server, since the scripted one cannot even encode such a body."""

    async def complete(self, request, sampling, *, route_key, call_seq):  # type: ignore[no-untyped-def]
        text = "ok \ud83d" if "broken" in str(request.messages) else "ok"
        return UpstreamResult(CanonicalResponse(text=text), request.body("m", sampling))

    async def count_tokens(self, request):  # type: ignore[no-untyped-def]
        return 1

    async def aclose(self) -> None:
        return None


@pytest.mark.parametrize(("path", "kind"), [(CHAT, "server_error"), ("/v1/messages", "api_error")])
def test_a_record_error_is_an_api_shaped_500_and_the_proxy_keeps_serving(tmp_path, path, kind):
    app = create_app(ProxyConfig(records_dir=tmp_path, secret="s"), _SurrogateUpstream())
    with TestClient(app) as data, TestClient(create_control_app(app)) as control:
        admin = {"Authorization": f"Bearer {app.state.proxy.config.admin_key}"}
        key = control.post("/rollouts", json={"rollout_id": "w"}, headers=admin).json()["api_key"]
        headers = {"Authorization": f"Bearer {key}", "x-api-key": key}
        body = {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "broken"}]}
        for stream in (False, True):
            failed = data.post(path, json={**body, "stream": stream}, headers=headers)
            assert failed.status_code == 500, failed.text
            error = failed.json()["error"]
            assert error["type"] == kind and "could not record this call" in error["message"]
        body["messages"][0]["content"] = "fine"
        assert data.post(path, json=body, headers=headers).status_code == 200
        assert data.get("/healthz").json()["status"] == "ok"
    assert [c.seq for c in read_calls(tmp_path, "w")] == [2]


def test_a_full_file_system_never_acknowledges_a_torn_record(upstream, scripted, tmp_path):
    """The real proxy under a 48 KiB file-size limit (`ulimit -f`): writes come back short, then fail.
    Every answered call is on disk whole, the failed ones are API-shaped 500s, /healthz says why, the
    file holds no torn line, and SIGTERM still stops the proxy."""
    records = tmp_path / "records"
    port, control_port = free_port(), free_port()
    url = f"http://127.0.0.1:{port}"
    argv = [sys.executable, "-m", "forge_eval._cli.main", "proxy", "serve", "--upstream", upstream[1].url]
    argv += ["--port", str(port), "--control-port", str(control_port), "--records", str(records)]
    env = {**os.environ, "FORGE_PROXY_SECRET": SECRET, "FORGE_PROXY_ADMIN_KEY": ADMIN_KEY}
    env["PYTHONDONTWRITEBYTECODE"] = "1"

    def limit_file_size() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (48 * 1024, 48 * 1024))

    process = subprocess.Popen(
        argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=limit_file_size
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(url + "/healthz", timeout=1)
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, process.stderr.read().decode()[-2000:]
                time.sleep(0.1)
        control = f"http://127.0.0.1:{control_port}"
        created = httpx.post(control + "/rollouts", json={"rollout_id": "full"}, headers=ADMIN).json()
        answered, failed = [], []
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {created['api_key']}"}) as client:
            for i in range(300):
                body = {"model": "m", "messages": [{"role": "user", "content": f"call {i} " + "x" * 400}]}
                answer = client.post(CHAT, json=body)
                (answered if answer.status_code == 200 else failed).append((i, answer))
                if len(failed) == 3:
                    break
        assert answered and len(failed) == 3, "the file-size limit was never reached"
        for _, answer in failed:
            assert answer.status_code == 500 and "could not record" in answer.json()["error"]["message"]
        health = httpx.get(url + "/healthz")
        assert health.status_code == 503 and "File too large" in health.json()["reason"]
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) is not None
    finally:
        process.kill()
        process.wait()
    calls, torn = load_calls(records / "full" / "0" / "calls.jsonl")
    assert torn == 0
    assert [c.original_request["messages"][0]["content"].split()[1] for c in calls] == [
        str(i) for i, _ in answered
    ]


def test_a_full_disk_refuses_creates_and_health_returns_once_space_is_freed(upstream, scripted, tmp_path):
    """The real proxy, whose file-size limit the test lowers and raises while it runs (`prlimit`), as a
    disk that fills up and is cleaned: a rollout created meanwhile is refused with a 503 every time
    (never answered without its record on disk), /healthz is 503 until the limit is raised and 200 right
    after, with no write in between; then the rollout is created and survives a kill -9 and a restart."""
    records = tmp_path / "records"
    port, control_port = free_port(), free_port()
    url, control = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{control_port}"
    process = start_cli_proxy(upstream[1].url, records, port, control_port)
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}

    def call(key: str) -> httpx.Response:
        return httpx.post(url + CHAT, json=body, headers={"x-api-key": key})

    def create(rollout_id: str) -> httpx.Response:
        return httpx.post(control + "/rollouts", json={"rollout_id": rollout_id}, headers=ADMIN)

    try:
        assert call(create("a").json()["api_key"]).status_code == 200
        _, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.prlimit(process.pid, resource.RLIMIT_FSIZE, (256, hard))  # the disk is full
        for _ in range(2):  # a retried create is refused as well: no key without a record
            refused = create("b")
            assert refused.status_code == 503, refused.text
            assert "could not save" in refused.json()["error"]["message"]
        assert httpx.get(control + "/rollouts/b", headers=ADMIN).status_code == 404
        health = httpx.get(url + "/healthz")
        assert health.status_code == 503 and "File too large" in health.json()["reason"]
        resource.prlimit(process.pid, resource.RLIMIT_FSIZE, (hard, hard))  # space freed
        assert httpx.get(url + "/healthz").status_code == 200
        key = create("b").json()["api_key"]
        assert call(key).status_code == 200
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        process = start_cli_proxy(upstream[1].url, records, port, control_port)
        assert call(key).status_code == 200
    finally:
        process.kill()
        process.wait()
    assert [c.seq for c in read_calls(records, "b")] == [0, 1]


def test_readers_skip_and_count_a_torn_last_line_and_the_writer_cuts_it(tmp_path):
    records = tmp_path / "records"
    path = records / "w" / "0" / "calls.jsonl"
    path.parent.mkdir(parents=True)
    whole = "".join(_call(i).model_dump_json() + "\n" for i in range(2))
    path.write_text(whole + _call(2).model_dump_json()[:50])  # a write cut by kill -9 or a full disk
    assert [c.seq for c in read_calls(records, "w")] == [0, 1]
    assert load_calls(path)[1] == 1
    out = tmp_path / "parquet"
    result = CliRunner().invoke(proxy_cli, ["compact", str(records), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "2 calls" in result.output and "1 torn last line(s) skipped" in result.output

    async def append() -> None:  # a writer opening the file (a restarted proxy) cuts the torn tail first
        writer = RecordWriter(records)
        await writer.write_call(_call(3))
        writer.close()

    asyncio.run(append())
    assert [c.seq for c in read_calls(records, "w")] == [0, 1, 3] and load_calls(path)[1] == 0

    path.write_text(whole[:30] + "\n" + whole)  # damage before the last line is not papered over
    with pytest.raises(ForgeError, match="line 1 is not a call record"):
        read_calls(records, "w")


def test_purge_then_recreate_writes_to_the_new_file(proxy):
    def call(key: str) -> None:
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        answer = httpx.post(proxy.url + CHAT, json=body, headers={"Authorization": f"Bearer {key}"})
        assert answer.status_code == 200, answer.text

    call(proxy.rollout("again")["api_key"])
    assert proxy.admin("DELETE", "/rollouts/again?purge=1").json()["purged"] is True
    assert not (proxy.records / "again" / "0").exists()
    call(proxy.rollout("again")["api_key"])
    call(proxy.rollout("again")["api_key"])
    assert [c.seq for c in read_calls(proxy.records, "again")] == [0, 1]


def test_per_rollout_memory_is_bounded(tmp_path: Path):
    """Distinct requests in one live rollout: the state kept per call stops growing at a fixed size."""
    app = create_app(ProxyConfig(records_dir=tmp_path, secret="s"), _SurrogateUpstream())
    with TestClient(app) as data, TestClient(create_control_app(app)) as control:
        admin = {"Authorization": f"Bearer {app.state.proxy.config.admin_key}"}
        created = control.post("/rollouts", json={"rollout_id": "long"}, headers=admin).json()
        state = app.state.proxy.rollouts.get("long", 0)
        for i in range(3 * RECENT_REQUESTS):
            body = {"model": "m", "input": f"turn {i}", "store": True}
            assert data.post(created["base_path"] + "/v1/responses", json=body).status_code == 200
        assert len(state.calls_by_hash) == RECENT_REQUESTS
        assert len(state.conversations._items) <= state.conversations.capacity
        repeat = {"model": "m", "input": f"turn {3 * RECENT_REQUESTS - 1}", "store": True}
        data.post(created["base_path"] + "/v1/responses", json=repeat)  # a retry is still linked
    calls = read_calls(tmp_path, "long")
    assert calls[-1].retry_of == calls[-2].call_id and len(calls) == 3 * RECENT_REQUESTS + 1


def test_fsync_mode_syncs_concurrent_calls_in_groups_and_fails_only_the_calls_a_sync_failed(
    tmp_path, monkeypatch
):
    """`durability="fsync"`: 48 calls written at once over 3 rollouts are on disk after far fewer syncs
    than calls (one per file per batch, each slowed to 20 ms so that calls queue behind it); a sync that
    fails (EIO on one rollout's file) fails that rollout's calls only, and the writer says why."""
    real_fdatasync = os.fdatasync
    synced: list[int] = []
    broken: set[int] = set()

    def fdatasync(fd: int) -> None:
        time.sleep(0.02)
        synced.append(fd)
        if os.fstat(fd).st_ino in broken:
            raise OSError(errno.EIO, "Input/output error")
        real_fdatasync(fd)

    monkeypatch.setattr(os, "fdatasync", fdatasync)

    async def main() -> list[BaseException | None]:
        writer = RecordWriter(tmp_path, durability="fsync")
        await asyncio.gather(*(writer.write_call(_call(0, rollout_id=r)) for r in "abc"))
        synced.clear()
        await asyncio.gather(
            *(writer.write_call(_call(seq, rollout_id=r)) for seq in range(1, 17) for r in "abc")
        )
        assert 3 <= len(synced) <= 12, synced  # 48 calls, 3 files: a few batches, not 48 syncs
        broken.add(os.stat(tmp_path / "b" / "0" / "calls.jsonl").st_ino)
        results = await asyncio.gather(
            *(writer.write_call(_call(17, rollout_id=r)) for r in "abc"), return_exceptions=True
        )
        assert writer.problem() and "Input/output error" in writer.problem()
        writer.close()
        return results

    a, b, c = asyncio.run(main())
    assert a is None and c is None and isinstance(b, RecordWriteError)
    for rollout_id in "abc":
        assert [x.seq for x in read_calls(tmp_path, rollout_id)] == list(range(18))


class _AnswerUpstream:
    """An in-process upstream whose answer carries whatever token ids a test gives it (a broken server:
    the scripted one always sends integers)."""

    token_ids: object = None

    async def complete(self, request, sampling, *, route_key, call_seq):  # type: ignore[no-untyped-def]
        response = CanonicalResponse(text="ok", prompt_token_ids=self.token_ids)  # type: ignore[arg-type]
        return UpstreamResult(response, request.body("m", sampling))

    async def count_tokens(self, request):  # type: ignore[no-untyped-def]
        return 1

    async def aclose(self) -> None:
        return None


def test_an_answer_a_record_cannot_hold_is_a_502_and_every_record_reads_back(tmp_path):
    """The proxy writes its records without validating the whole model: what an upstream fills in is
    checked as the answer comes in, as the record model would (numpy integers or "12" become 12). Token ids
    that are not integers fail the call (502, recorded as an upstream failure); a request with an integer
    beyond 64 bits is served and recorded exactly."""
    upstream = _AnswerUpstream()
    app = create_app(ProxyConfig(records_dir=tmp_path, secret="s"), upstream)
    with TestClient(app) as data, TestClient(create_control_app(app)) as control:
        admin = {"Authorization": f"Bearer {app.state.proxy.config.admin_key}"}
        key = control.post("/rollouts", json={"rollout_id": "w"}, headers=admin).json()["api_key"]
        headers = {"Authorization": f"Bearer {key}"}
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        for bad in (["x"], [1.5], [[1]], "12"):
            upstream.token_ids = bad
            answer = data.post(CHAT, json=body, headers=headers)
            assert answer.status_code == 502, answer.text
            assert "cannot be recorded: prompt_token_ids" in answer.json()["error"]["message"]
        upstream.token_ids = [np.int64(1), "2"]
        huge = 10**30
        assert data.post(CHAT, json={**body, "seed": huge}, headers=headers).status_code == 200
    calls = read_calls(tmp_path, "w")
    assert [c.error_kind for c in calls] == ["http_5xx"] * 4 + ["none"]
    assert calls[-1].original_request["seed"] == huge and calls[-1].prompt_token_ids == [1, 2]
