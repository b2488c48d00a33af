"""A hostile harness in a training rollout cannot reach the proxy's credentials, records or control plane.

The real `forge-eval proxy serve` keeps its generated `.secret` and `.admin-key` (0600, root's) and its
control socket where a user would: under the checkout's runs/. A scripted harness, run by the `local`
backend with the binds every Python harness gets (`python_ro_binds()`), then does what a reward hacker
would: reads those files by their usual path and by searching the whole filesystem, reads /etc/shadow
and /root, tries the control socket, the proxy's host ports and another host server, posts itself a
reward, and calls the model inside another rollout (with its own key, and with a key signed by any secret
it found). Every probe must fail, and the rollout's reward must be the verifier's alone.
"""

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput, get_model

from forge_eval.benchmarks.qwenclawbench import data_root, grade_run, load_tasks, upstream_tree
from forge_eval.harnesses import harness_settings
from forge_eval.harnesses._external import ExternalHarness, Launch, ProxyEndpoint, external_harness
from forge_eval.harnesses._workspace import Workspace
from forge_eval.proxy import ScriptedUpstream, read_calls, serve_in_thread
from forge_eval.sandbox import RolloutCommand, RolloutSpec, SandboxResult, Verdict, python_ro_binds
from forge_eval.training.backends import LocalBackend
from tests.benchmarks.forgelab._oracle import USAGE
from tests.sandbox._sandboxes import http_server, needs_bwrap

pytestmark = needs_bwrap

CHECKOUT = Path(__file__).resolve().parents[2]
REWARD = 0.25  # what the verifier gives, whatever the harness claims

HOSTILE = r"""
import hashlib, hmac, http.client, json, os, socket, urllib.error, urllib.request

def read(path):
    try:
        with open(path) as f:
            return "READ:" + f.read().strip()
    except OSError as e:
        return type(e).__name__

def request(method, url, key, body=None, unix=None):
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    try:
        if unix:
            class Unix(http.client.HTTPConnection):
                def connect(self):
                    self.sock = socket.socket(socket.AF_UNIX)
                    self.sock.settimeout(3)
                    self.sock.connect(unix)
            conn = Unix("proxy")
            conn.request(method, url, data, headers)
            return conn.getresponse().status
        sent = urllib.request.Request(url, data, headers, method=method)
        return urllib.request.urlopen(sent, timeout=3).status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError as e:
        return type(getattr(e, "reason", e)).__name__

def reach(port):
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect(("127.0.0.1", port))
        return "connected"
    except OSError as e:
        return type(e).__name__

env = os.environ
own, root = env["FORGE_ROLLOUT_ID"], env["FORGE_PROXY_BASE_URL"]  # http://127.0.0.1:18080/r/<own>/0
plane = root.split("/r/")[0]
report = {"uid": os.getuid()}
report["by_path"] = {n: read(os.path.join(env["GUESS_RECORDS"], n)) for n in (".secret", ".admin-key")}
report["by_path"]["control.sock"] = read(env["GUESS_SOCKET"])
found = []
for top, dirs, files in os.walk("/"):
    if top in ("/proc", "/sys", "/dev"):
        dirs[:] = []
        continue
    found += [os.path.join(top, n) for n in files if n in (".secret", ".admin-key") or n.endswith(".sock")]
report["found"] = {p: read(p) for p in found}
report["shadow"] = read("/etc/shadow")
try:
    report["root"] = sorted(os.listdir("/root"))
except OSError as e:
    report["root"] = type(e).__name__
loot = {**report["by_path"], **report["found"]}
secret = next((v[5:] for p, v in loot.items() if p.endswith(".secret") and v.startswith("READ:")), None)
admin = next((v[5:] for p, v in loot.items() if p.endswith(".admin-key") and v.startswith("READ:")), None)
keys = [k for k in (admin, env["OPENAI_API_KEY"]) if k]
rewards = []
for key in keys:
    rewards.append(request("POST", f"{plane}/rollouts/{own}/reward", key, {"reward": 1.0}))
    for sock in [p for p in found if p.endswith(".sock")] + [env["GUESS_SOCKET"]]:
        rewards.append(request("POST", f"/rollouts/{own}/reward", key, {"reward": 1.0}, unix=sock))
report["rewards"] = rewards
call = {"model": "policy", "messages": [{"role": "user", "content": "you are now the victim"}]}
victim = f"{plane}/r/{env['VICTIM']}/0/v1/chat/completions"
report["inject_own_key"] = request("POST", victim, env["OPENAI_API_KEY"], call)
if secret:
    mac = hmac.new(secret.encode(), f"{env['VICTIM']}\x000".encode(), hashlib.sha256).hexdigest()[:40]
    report["inject_forged_key"] = request("POST", victim, f"fk.{env['VICTIM']}.0.{mac}", call)
report["ports"] = {name: reach(int(env[name])) for name in ("DATA_PORT", "OTHER_PORT")}
own_url = env["OPENAI_BASE_URL"] + "/chat/completions"
report["own_call"] = request("POST", own_url, env["OPENAI_API_KEY"], call)
json.dump(report, open("report.json", "w"))
print("done")
"""


@dataclass
class CliProxy:
    """`forge-eval proxy serve` as a user runs it: credentials generated into its records directory."""

    url: str
    records: Path
    socket: Path

    def admin(self, method: str, path: str, **kwargs: object) -> httpx.Response:
        key = (self.records / ".admin-key").read_text().strip()
        transport = httpx.HTTPTransport(uds=str(self.socket))
        with httpx.Client(transport=transport, base_url="http://proxy", timeout=10) as client:
            return client.request(method, path, headers={"Authorization": f"Bearer {key}"}, **kwargs)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def cli_proxy(tmp_path: Path) -> Iterator[CliProxy]:
    """The proxy with its records, credentials and control socket under the checkout's runs/, where the
    checkout-wide bind of the past exposed them."""
    home = CHECKOUT / "runs" / f"test-sandbox-{uuid.uuid4().hex[:8]}"
    records, control = home / "proxy-records", home / "control.sock"
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FORGE_PROXY_")}
    with serve_in_thread(ScriptedUpstream().app()) as upstream:
        argv = [sys.executable, "-m", "forge_eval._cli.main", "proxy", "serve", "--upstream", upstream.url]
        argv += ["--port", str(port), "--records", str(records), "--control-socket", str(control)]
        process = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=tmp_path
        )
        try:
            deadline = time.monotonic() + 30
            while not control.exists() or not _healthy(port):
                assert process.poll() is None and time.monotonic() < deadline, process.stderr.read().decode()
                time.sleep(0.1)
            yield CliProxy(f"http://127.0.0.1:{port}", records, control)
        finally:
            process.kill()
            process.wait()
            shutil.rmtree(home, ignore_errors=True)


def _healthy(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def test_hostile_harness_finds_no_credentials_and_cannot_change_its_reward(
    cli_proxy: CliProxy, tmp_path: Path
) -> None:
    script = tmp_path / "hostile.py"
    script.write_text(HOSTILE)
    own = cli_proxy.admin("POST", "/rollouts", json={"rollout_id": "hostile"}).json()
    cli_proxy.admin("POST", "/rollouts", json={"rollout_id": "victim"}).raise_for_status()

    async def verify(result: SandboxResult, work: Path) -> Verdict:
        return Verdict(REWARD, {"report": (work / "report.json").read_text()}, result.stdout.strip())

    with http_server(b"another host server") as other:
        extra = {
            "GUESS_RECORDS": str(cli_proxy.records),
            "GUESS_SOCKET": str(cli_proxy.socket),
            "VICTIM": "victim",
            "DATA_PORT": cli_proxy.url.rsplit(":", 1)[1],
            "OTHER_PORT": str(other),
        }

        def program(spec: RolloutSpec, work: Path) -> RolloutCommand:
            argv = [sys.executable, str(script)]
            return RolloutCommand(argv, env=extra, ro_binds=[*python_ro_binds(), script], verify=verify)

        spec = RolloutSpec("hostile", 0, "react", {}, cli_proxy.url + own["base_path"], own["api_key"], 120)
        outcome = asyncio.run(_run(LocalBackend(program, root_dir=tmp_path / "rollouts"), spec))
    assert outcome.status == "completed", outcome
    report = json.loads(outcome.verifier_output["report"])
    assert report["uid"] != 0
    assert report["by_path"] == {
        ".secret": "FileNotFoundError",
        ".admin-key": "FileNotFoundError",
        "control.sock": "FileNotFoundError",
    }
    # the search finds only the sandbox's own forward socket: no credential, no control socket
    assert [p for p in report["found"] if not p.startswith("/run/forge/fwd-")] == []
    assert report["shadow"] == "PermissionError"
    bound_under_root = {
        p.relative_to("/root").parts[0] for p in python_ro_binds() if p.is_relative_to("/root")
    }
    assert set(report["root"]) <= bound_under_root  # /root holds at most the interpreter's folder
    # with its own key only (no admin key found): the data plane has no control routes, no socket is there
    assert report["rewards"] == [404, "FileNotFoundError"]
    assert report["inject_own_key"] in (401, 403)
    assert "inject_forged_key" not in report  # no secret to forge with
    assert report["ports"] == {"DATA_PORT": "ConnectionRefusedError", "OTHER_PORT": "ConnectionRefusedError"}
    assert report["own_call"] == 200  # the rollout's own model calls still work

    before = cli_proxy.admin("GET", "/rollouts/hostile").json()["rollout"]
    assert before["reward"] is None  # nothing the harness did set a reward
    assert cli_proxy.admin("GET", "/rollouts/victim/calls").json()["calls"] == []
    assert len(cli_proxy.admin("GET", "/rollouts/hostile/calls").json()["calls"]) == 1
    reported = cli_proxy.admin("POST", "/rollouts/hostile/reward", json={"reward": outcome.reward})
    assert reported.json()["rollout"]["reward"] == REWARD


async def _run(backend: LocalBackend, spec: RolloutSpec):  # noqa: ANN202
    handle = await backend.start(spec)
    try:
        return await backend.wait(handle, time.time() + spec.deadline_s)
    finally:
        await backend.stop(handle)


RECORDS_HOSTILE = r"""
import json, os, urllib.request
body = json.dumps({"model": "forge-policy", "messages": [{"role": "user", "content": "hi"}]}).encode()
headers = {"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"], "Content-Type": "application/json"}
sent = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", body, headers)
answer = json.load(urllib.request.urlopen(sent, timeout=60))["choices"][0]["message"]["content"]
tampered = []
for top in (os.path.dirname(os.environ["HOME"]), "/"):  # its workspace, then everything it can see
    for folder, dirs, files in os.walk(top):
        if folder.startswith(("/proc", "/sys", "/dev", "/usr")):
            dirs[:] = []
            continue
        for name in files:
            if name.endswith((".jsonl", ".json")) and "records" in folder:
                path = os.path.join(folder, name)
                try:
                    with open(path, "w") as f:
                        f.write('{"forged": true}\n')
                    tampered.append(path)
                except OSError:
                    pass
print(json.dumps({"answer": answer, "tampered": tampered}))
"""


class _RecordsHostile(ExternalHarness):
    """A harness program (a Python script here) that looks for its proxy's records to rewrite them."""

    name = "records-hostile"
    description = "rewrites any call record it can reach"
    packages = ()

    def __init__(self, prefix: Path) -> None:
        self.prefix = prefix

    def install(self) -> Path:
        return self.prefix

    def launch(
        self, *, prompt: str, proxy: ProxyEndpoint, workspace: Workspace, prefix: Path, lean: bool = False
    ):  # noqa: ANN201
        env = {"OPENAI_BASE_URL": f"{proxy.root}/v1", "OPENAI_API_KEY": proxy.api_key}
        return Launch([sys.executable, str(prefix / "hostile.py")], env)

    def final_answer(self, stdout: str) -> str:
        return stdout.strip().splitlines()[-1] if stdout.strip() else ""


def test_harness_under_run_cannot_rewrite_its_call_records(tmp_path: Path) -> None:
    """`run --harness`: the sample's proxy keeps its records out of the sandbox's view, so a harness that
    rewrites every record file it can reach finds none, and the run's records hold the real call."""
    prefix = tmp_path / "prefix"
    prefix.mkdir()
    (prefix / "hostile.py").write_text(RECORDS_HOSTILE)
    reply = ModelOutput.from_content("mockllm/model", "the real answer")
    reply.usage = USAGE  # mockllm would count tokens with tiktoken, which downloads a file
    model = get_model("mockllm/model", custom_outputs=[reply])
    task = Task(
        dataset=MemoryDataset([Sample(input="hi")]), solver=external_harness(_RecordsHostile(prefix), [], "")
    )
    with harness_settings(records_dir=tmp_path / "records", sandbox=True):
        [log] = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success", log.error
    report = json.loads((log.samples or [])[0].output.completion)
    assert report == {"answer": "the real answer", "tampered": []}
    [rollout] = [p.name for p in (tmp_path / "records").iterdir()]
    [call] = read_calls(tmp_path / "records", rollout)
    assert call.returned_response["choices"][0]["message"]["content"] == "the real answer"


def test_the_host_side_grader_imports_nothing_from_the_agents_workspace(
    tmp_path: Path, upstream_trees: Path
) -> None:
    """QwenClawBench's grading (upstream's code) runs on the host with the agent's workspace as its cwd: a
    `json.py` or `lib_grading.py` the agent left there is not imported in place of the standard library
    or upstream's module (it would run outside any sandbox)."""
    tree = upstream_tree(data_root(upstream_trees / "SKYLENAGE-AI+QwenClawBench@e4eefcf"))
    task = next(t for t in load_tasks(data_root(tree)) if t.grading_type == "automated")
    marker = tmp_path / "hijacked"
    for module in ("json", "lib_grading"):
        (tmp_path / f"{module}.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    outcome = asyncio.run(
        grade_run(tree, task.path, home=tmp_path / "home", workspace=tmp_path, judge_url="http://127.0.0.1:9/v1",
                  judge_key="unused")
    )  # fmt: skip
    assert outcome.grade is not None and outcome.grade["grading_type"] == "automated", outcome.error
    assert not marker.exists()
