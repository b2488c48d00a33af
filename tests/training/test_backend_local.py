"""The `local` rollout backend against the real recording proxy: a tool-calling agent (OpenAI SDK) runs in
its bubblewrap sandbox, really executes the model's shell call there, and is graded by a host verifier;
plus deadline, crash, concurrency limit, cleanup and the proxy-only network."""

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest

from forge_eval._errors import ForgeError, UsageError
from forge_eval.proxy import HttpProxyControl
from forge_eval.sandbox import RolloutCommand, RolloutSpec, SandboxResult, Verdict, python_ro_binds
from forge_eval.training.backends import ROLLOUT_BACKENDS, LocalBackend
from tests.sandbox._sandboxes import http_server, needs_bwrap, processes_with
from tests.training._agent_loops import agent_loop_entry, instantiate_agent_loop
from tests.training.conftest import PROXY_ADMIN_KEY

pytestmark = needs_bwrap

AGENT = """
import json, os, subprocess, urllib.error, urllib.request
import openai

client = openai.OpenAI(max_retries=0)  # OPENAI_BASE_URL / OPENAI_API_KEY from the backend
tools = [{"type": "function", "function": {"name": "bash",
          "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}}]
messages = [{"role": "system", "content": "You are a shell agent."},
            {"role": "user", "content": "create hello.txt containing hi"}]
for _ in range(4):
    reply = client.chat.completions.create(model="policy", messages=messages, tools=tools)
    message = reply.choices[0].message
    messages.append(message.model_dump(exclude_none=True))
    if not message.tool_calls:
        break
    for call in message.tool_calls:
        run = subprocess.run(json.loads(call.function.arguments)["command"], shell=True, capture_output=True)
        messages.append({"role": "tool", "tool_call_id": call.id, "content": run.stdout.decode()})
print(message.content)

def probe(url, key):
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"})
    try:
        return urllib.request.urlopen(request, timeout=3).status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError as e:
        return type(getattr(e, "reason", e)).__name__

root = os.environ["FORGE_PROXY_BASE_URL"]  # http://127.0.0.1:18080/r/<id>/<attempt>
control = root.split("/r/")[0] + "/rollouts/" + os.environ["FORGE_ROLLOUT_ID"]
probes = {"control_with_rollout_key": probe(control, os.environ["OPENAI_API_KEY"]),
          "host_proxy_port": probe(os.environ["HOST_PROXY"], "x"),
          "control_port": probe(os.environ["HOST_CONTROL"] + "/rollouts", os.environ["OPENAI_API_KEY"]),
          "other_host_server": probe(os.environ["OTHER_SERVER"], "x")}
json.dump(probes, open("probes.json", "w"))
"""


def hello_program(agent: Path, **env: str):  # noqa: ANN201
    """Runs AGENT with this venv; the verifier checks the file the model's shell call should create."""

    async def verify(result: SandboxResult, work: Path) -> Verdict:
        made = work / "hello.txt"
        ok = made.is_file() and made.read_text() == "hi"
        probes = json.loads((work / "probes.json").read_text())
        return Verdict(1.0 if ok else 0.0, {"probes": probes}, result.stdout.strip())

    def program(spec: RolloutSpec, work: Path) -> RolloutCommand:
        return RolloutCommand(
            argv=[sys.executable, str(agent)], env=env, ro_binds=[*python_ro_binds(), agent], verify=verify
        )

    return program


def _spec(rollout_id: str, base: str, command: list[str] | None = None) -> RolloutSpec:
    task = {"task_id": rollout_id, **({"command": command} if command else {})}
    return RolloutSpec(rollout_id, 0, "react", task, base, "key", 60.0)


async def _run(backend: LocalBackend, spec: RolloutSpec, deadline: float | None = None):  # noqa: ANN202
    handle = await backend.start(spec)
    try:
        return await backend.wait(handle, deadline or time.time() + spec.deadline_s)
    finally:
        await backend.stop(handle)


def test_rollout_through_the_real_proxy(proxy_url: str, proxy_control_url: str, tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)

    async def main():  # noqa: ANN202
        control = HttpProxyControl(proxy_control_url, PROXY_ADMIN_KEY)
        fields = {"rollout_id": "local-1", "group_uid": "g", "harness": "react"}
        created = await control.create_rollout(fields)
        spec = RolloutSpec("local-1", 0, "react", {}, proxy_url + created.base_path, created.api_key, 60)
        with http_server(b"other") as other:
            program = hello_program(
                agent,
                HOST_PROXY=proxy_url,
                HOST_CONTROL=proxy_control_url,
                OTHER_SERVER=f"http://127.0.0.1:{other}/",
            )
            outcome = await _run(LocalBackend(program, root_dir=tmp_path / "rollouts"), spec)
        await control.report("local-1", 0, outcome)
        fetched = await control.fetch("local-1", 0)
        await control.aclose()
        return outcome, fetched

    outcome, (record, calls) = asyncio.run(main())
    assert outcome.status == "completed" and outcome.exit_code == 0
    assert outcome.reward == 1.0 and "hello.txt" in outcome.answer  # the shell call ran in the sandbox
    probes = outcome.verifier_output["probes"]
    assert probes.pop("control_with_rollout_key") in (401, 403, 404)  # no control routes on the data plane
    assert probes == {
        "control_port": "ConnectionRefusedError",  # the proxy's control listener is not forwarded
        "host_proxy_port": "ConnectionRefusedError",  # the proxy's own port is not on the sandbox's loopback
        "other_host_server": "ConnectionRefusedError",
    }
    assert record.termination == "completed" and record.reward == 1.0
    assert len(calls) == 2 and calls[0].rollout_id == "local-1"
    assert not (tmp_path / "rollouts" / "local-1" / "0").exists()  # cleaned up at stop


def test_deadline_crash_and_cleanup(tmp_path: Path) -> None:
    backend = LocalBackend(root_dir=tmp_path)
    base = "http://127.0.0.1:9/r/x/0"

    async def main():  # noqa: ANN202
        slow = _spec("slow", base, ["/bin/sh", "-c", "sleep 300 & sleep 300"])
        t0 = time.monotonic()
        timed_out = await _run(backend, slow, deadline=time.time() + 1.0)
        waited = time.monotonic() - t0
        crashed = await _run(backend, _spec("crash", base, ["/bin/sh", "-c", "exit 7"]))
        return timed_out, waited, crashed

    timed_out, waited, crashed = asyncio.run(main())
    assert timed_out.status == "timeout" and waited < 5
    assert (crashed.status, crashed.exit_code) == ("harness_crash", 7)
    assert processes_with("FORGE_ROLLOUT_ID=slow") == [] and processes_with("FORGE_ROLLOUT_ID=crash") == []
    assert list(tmp_path.glob("*/0")) == []


def test_concurrency_limit(tmp_path: Path) -> None:
    """Six rollouts, at most two at a time: the sandboxes' own start/end stamps never overlap by three."""
    backend = LocalBackend(root_dir=tmp_path, max_concurrent=2, keep_workdirs=True)
    stamp = "date +%s.%N > start; sleep 0.6; date +%s.%N > end"

    async def main() -> None:
        specs = [_spec(f"c{i}", "http://127.0.0.1:9/r/x/0", ["/bin/sh", "-c", stamp]) for i in range(6)]
        outcomes = await asyncio.gather(*(_run(backend, s) for s in specs))
        assert {o.status for o in outcomes} == {"completed"}

    asyncio.run(main())
    spans = [
        (float((d / "start").read_text()), float((d / "end").read_text())) for d in tmp_path.glob("c*/0/work")
    ]
    assert len(spans) == 6
    most = max(sum(s <= t < e for s, e in spans) for t, _ in spans)
    assert most == 2


def test_program_errors_are_messages(tmp_path: Path) -> None:
    backend = LocalBackend(root_dir=tmp_path)
    base = "http://127.0.0.1:9/r/x/0"
    with pytest.raises(UsageError, match="`command` must be a non-empty list"):
        asyncio.run(_run(backend, RolloutSpec("bad", 0, "react", {"command": "ls"}, base, "k", 10)))
    with pytest.raises(UsageError, match="training task 'nocmd' has no benchmark"):
        asyncio.run(_run(backend, _spec("nocmd", base)))  # react needs the task's benchmark for its tools
    nohome = RolloutSpec("web", 0, "molmoweb", {"task_id": "web"}, base, "k", 10)
    with pytest.raises(ForgeError, match="harness 'molmoweb' cannot run training rollouts"):
        asyncio.run(_run(backend, nohome))
    with pytest.raises(UsageError, match="not an http"):
        asyncio.run(_run(backend, _spec("url", "ftp://x/r", ["/bin/true"])))
    assert list(tmp_path.glob("*/0")) == []  # a failed start leaves nothing behind
    after = asyncio.run(_run(backend, _spec("after", base, ["/bin/true"])))
    assert after.status == "completed"  # the failed starts gave their slots back


def test_registered_as_local() -> None:
    assert ROLLOUT_BACKENDS.get("local") is LocalBackend


@pytest.mark.verl
@pytest.mark.slow
def test_agent_loops_yaml_runs_a_local_rollout(
    proxy_url: str, proxy_control_url: str, tmp_path: Path, monkeypatch
) -> None:  # noqa: ANN001
    """training/configs/agent_loops.yaml as veRL instantiates it (`backend: local`), one sandboxed rollout
    through the real proxy into training outputs."""
    monkeypatch.setenv("FORGE_PROXY_ADMIN_KEY", PROXY_ADMIN_KEY)
    entry = agent_loop_entry()
    assert entry.backend == "local"
    entry.proxy_url = proxy_url
    entry.control_url = proxy_control_url
    loop = instantiate_agent_loop(entry)
    assert isinstance(loop.backend, LocalBackend)
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    with http_server(b"other") as other:
        loop.backend.program = hello_program(
            agent,
            HOST_PROXY=proxy_url,
            HOST_CONTROL=proxy_control_url,
            OTHER_SERVER=f"http://127.0.0.1:{other}/",
        )
        row = {"uid": "u1", "extra_info": {"forge_task": '{"task_id": "hello", "harness": "react"}'}}
        outputs = asyncio.run(loop.run({"temperature": 1.0}, **row))
    assert len(outputs) >= 1 and {o.reward_score for o in outputs} == {1.0}
