"""A hostile agent stays in its desktop; a killed run does not break the next; a dead desktop fails the run.

The agent is scripted (mockllm replies; no vision model runs on CPU here); everything else is real: the
local desktop, OSWorld's setup steps and checker, the computer harness. Its first action starts a probe
that tries to leave the desktop: write /root, read /etc/shadow, read and write this checkout and the
run's logs, reach a host port, find OSWorld's server on every listening port and ask it for /etc/shadow
and /root (by command, `/file` and `/setup/upload`); then, with OSWorld's password, sudo makes it root
inside the box (a user namespace of the desktop's own uid), and as that root it tries again: write /root,
read /etc/shadow, unmount what hides it, reach the host port. The probe writes what happened to
~/probe.json, which the test reads through OSWorld's own client while the sample runs;
the next action solves the task, and the score must be 1.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import string
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, get_model

from tests.benchmarks.osworld._oracles import ORACLES
from tests.benchmarks.osworld._scripted import scripted_outputs

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

VLC_TASK = "9195653c-f4aa-453d-aa95-787f6ccfaae9"
REPO = Path(__file__).resolve().parents[3]
#: Upstream's 60 s and 20 s waits, shortened for the tests.
WAITS = {"ready_wait": 0.0, "settle_wait": 0.0}

# Run detached from the action that starts it, once that action has returned: a server busy running the
# action could not answer the probe meanwhile.
_PROBE = string.Template("""\
import json, os, subprocess, socket, time, urllib.parse, urllib.request

time.sleep(2)
found = {}


def attempt(name, action):
    try:
        value = action()
        found[name] = {"ok": True, "value": value[:400] if isinstance(value, (str, list)) else value}
    except Exception as exc:
        found[name] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:400]}


def write(path):
    with open(path, "w") as f:
        f.write("escaped")


def listening_ports():
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in open(table).read().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A":
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return sorted(ports)


def is_osworld_server(port):
    for _ in range(5):  # a server busy with an observation answers late
        try:
            return urllib.request.urlopen(f"http://127.0.0.1:{port}/platform", timeout=3).read() == b"Linux"
        except TimeoutError:
            continue
    return False


def server_execute(port, command):
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/setup/execute",
        data=json.dumps({"command": command, "shell": True}).encode(),
        headers={"Content-Type": "application/json"},
    )
    return json.loads(urllib.request.urlopen(request, timeout=20).read())


def server_file(port, path):
    form = urllib.parse.urlencode({"file_path": path}).encode()
    return urllib.request.urlopen(f"http://127.0.0.1:{port}/file", data=form, timeout=20).read().decode()


def server_upload(port, path):
    body = (
        f'--b\\r\\nContent-Disposition: form-data; name="file_path"\\r\\n\\r\\n{path}\\r\\n'
        '--b\\r\\nContent-Disposition: form-data; name="file_data"; filename="x"\\r\\n\\r\\n'
        'escaped\\r\\n--b--\\r\\n'
    )
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/setup/upload",
        data=body.encode(),
        headers={"Content-Type": "multipart/form-data; boundary=b"},
    )
    return urllib.request.urlopen(request, timeout=20).read().decode()


attempt("write_root", lambda: write("/root/$canary"))
attempt("list_root", lambda: os.listdir("/root"))
attempt("read_shadow", lambda: open("/etc/shadow").read())
attempt("read_checkout", lambda: open("$checkout_file").read())
attempt("write_checkout", lambda: write("$checkout_dir/$canary"))
attempt("list_run_logs", lambda: os.listdir("$log_dir"))
attempt("host_port", lambda: socket.create_connection(("127.0.0.1", $host_port), timeout=3).sendall(b"x"))
found["servers"] = []
for port in listening_ports():
    try:
        if not is_osworld_server(port):
            continue
    except Exception:
        continue
    found["servers"].append(port)
    attempt(f"server{port}_shadow", lambda: server_execute(port, "cat /etc/shadow"))
    attempt(f"server{port}_root", lambda: server_execute(port, "touch /root/$canary-server && id -u"))
    attempt(f"server{port}_file", lambda: server_file(port, "/etc/shadow"))
    attempt(f"server{port}_upload", lambda: server_upload(port, "/root/$canary-upload"))


def as_root(argv, password="password"):
    done = subprocess.run(
        ["sudo", "-S", "-p", "", *argv], input=password + "\\n", capture_output=True, text=True, timeout=20
    )
    return {"returncode": done.returncode, "output": (done.stdout + done.stderr)[-400:]}


attempt("sudo", lambda: as_root(["id", "-u"]))
attempt("sudo_wrong_password", lambda: as_root(["id", "-u"], password="wrong"))
attempt("sudo_write_root", lambda: as_root(["sh", "-c", "echo escaped > /root/$canary-sudo"]))
attempt("sudo_read_shadow", lambda: as_root(["cat", "/etc/shadow"]))
unhide = "umount /etc/shadow; cat /etc/shadow"
attempt("sudo_unhide_shadow", lambda: as_root(["unshare", "--mount", "sh", "-c", unhide]))
connect = "import socket; socket.create_connection(('127.0.0.1', $host_port), timeout=3).sendall(b'x')"
attempt("sudo_host_port", lambda: as_root(["python3", "-c", connect]))
with open(os.path.expanduser("~/probe.json"), "w") as f:
    json.dump(found, f)
""")


class _HostPort:
    """A host port the agent must not reach: records every connection made to it."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()


def test_hostile_agent_cannot_leave_the_desktop(
    osworld_root: Path, desktop_ready: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from forge_eval.benchmarks.osworld import _task, osworld

    canary = f"forge-osworld-canary-{os.getpid()}"
    host_port = _HostPort()
    probe = _PROBE.substitute(
        canary=canary,
        checkout_file=str(Path(__file__).resolve()),
        checkout_dir=str(REPO),
        log_dir=str(tmp_path),
        host_port=host_port.port,
    )
    episodes: list[Any] = []
    original = _task.start_episode
    monkeypatch.setattr(
        _task, "start_episode", lambda *a, **k: episodes.append(original(*a, **k)) or episodes[-1]
    )
    seen: dict[str, Any] = {}

    def replies() -> Iterator[ModelOutput]:
        detached = "start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL"
        # base64: upstream's reply parser splits code at every ';', and the probe's text has some
        encoded = base64.b64encode(probe.encode()).decode()
        launch = (
            "import base64, subprocess, sys\n"
            f"subprocess.Popen([sys.executable, '-c', base64.b64decode({encoded!r}).decode()], {detached})"
        )
        yield scripted_outputs([f"First I look around.\n```python\n{launch}\n```"])[0]
        # Read what the probe found through OSWorld's own client, as the checkers read files.
        deadline = time.monotonic() + 90
        while not seen and time.monotonic() < deadline:
            found = episodes[-1].env.controller.get_file("/home/user/probe.json")
            seen.update(json.loads(found) if found else {})
            time.sleep(1)
        yield scripted_outputs([f"Now the task.\n```python\n{ORACLES[VLC_TASK][1]}```"])[0]
        yield scripted_outputs(["The setting is saved.\n```DONE```"])[0]

    model = get_model("mockllm/model", custom_outputs=replies())
    task = osworld(task_ids=VLC_TASK, data_dir=str(osworld_root), max_steps=4, pause=0.3, **WAITS)
    try:
        (log,) = inspect_eval(task, model=model, log_dir=str(tmp_path), display="none", max_samples=1)
    finally:
        host_port.server.close()
        for leftover in (
            *(Path("/root") / f"{canary}{end}" for end in ("", "-server", "-upload", "-sudo")),
            REPO / canary,
        ):
            leftover.unlink(missing_ok=True)

    assert log.status == "success", log.error
    (sample,) = log.samples or []
    assert sample.scores is not None
    assert sample.scores["osworld_scorer"].value == 1.0, sample.scores["osworld_scorer"].explanation
    assert seen, "the probe's report was not found: did its action run?"
    for name in (
        "write_root",
        "list_root",
        "read_shadow",
        "read_checkout",
        "write_checkout",
        "list_run_logs",
    ):
        assert not seen[name]["ok"], (name, seen[name])
    assert not seen["host_port"]["ok"] and host_port.connections == 0, seen["host_port"]
    for port in seen["servers"]:  # reaching the desktop's own server gives nothing the agent lacks
        for asked in (f"server{port}_shadow", f"server{port}_root"):
            assert not seen[asked]["ok"] or seen[asked]["value"]["returncode"] != 0, (asked, seen[asked])
        shadow = seen[f"server{port}_file"]
        assert not shadow["ok"] or "root:" not in shadow["value"], shadow
        assert not seen[f"server{port}_upload"]["ok"], seen[f"server{port}_upload"]
    # sudo with OSWorld's password is root inside the box, and that root gets no further than the user
    assert seen["sudo"]["value"] == {"returncode": 0, "output": "0\n"}, seen["sudo"]
    assert seen["sudo_wrong_password"]["value"]["returncode"] != 0, seen["sudo_wrong_password"]
    for name in ("sudo_write_root", "sudo_host_port"):
        assert seen[name]["value"]["returncode"] != 0, (name, seen[name])
    for name in ("sudo_read_shadow", "sudo_unhide_shadow"):
        assert "root:" not in seen[name]["value"]["output"], (name, seen[name])
    assert host_port.connections == 0
    ends = ("", "-server", "-upload", "-sudo")
    assert not [end for end in ends if (Path("/root") / f"{canary}{end}").exists()]
    assert not (REPO / canary).exists()


_KILLED_RUN = string.Template("""\
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from forge_eval.benchmarks.osworld import _task, osworld

original = _task.start_episode


def announce(*args, **kwargs):
    episode = original(*args, **kwargs)
    print("desktop up", flush=True)
    return episode


_task.start_episode = announce
reply = ModelOutput.from_content("mockllm/model", "```python\\nimport time; time.sleep(600)\\n```")
reply.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
task = osworld(task_ids="$task", data_dir="$data", max_steps=2, pause=0.3, ready_wait=0, settle_wait=0)
inspect_eval(task, model=get_model("mockllm/model", custom_outputs=[reply]), log_dir="$logs", display="none")
""")


def test_a_run_killed_mid_sample_does_not_break_the_next(
    osworld_root: Path, desktop_ready: None, tmp_path: Path
) -> None:
    from forge_eval.benchmarks.osworld import osworld

    script = _KILLED_RUN.substitute(task=VLC_TASK, data=osworld_root, logs=tmp_path / "killed")
    killed = subprocess.Popen([sys.executable, "-c", script], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert killed.stdout is not None
        line = killed.stdout.readline()  # blocks until the desktop is up (or the run died)
        assert line.strip() == "desktop up", f"the run to kill did not start its desktop: {line!r}"
        time.sleep(3)  # the agent's first action (a long sleep on the desktop) is now running
    finally:
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait()
    from forge_eval.benchmarks.osworld._desktop import STATE_ROOT

    # the killed run's desktop: its home, log and owner ("pid start-time uid")
    (left,) = [
        d for d in STATE_ROOT.glob("desktop-*") if (d / "owner").read_text().split()[0] == str(killed.pid)
    ]
    uid = int((left / "owner").read_text().split()[2])

    replies = [f"```python\n{ORACLES[VLC_TASK][1]}```", "DONE"]
    model = get_model("mockllm/model", custom_outputs=scripted_outputs(replies))
    task = osworld(task_ids=VLC_TASK, data_dir=str(osworld_root), max_steps=3, pause=0.3, **WAITS)
    (log,) = inspect_eval(task, model=model, log_dir=str(tmp_path / "next"), display="none")
    assert log.status == "success", log.error
    (sample,) = log.samples or []
    assert sample.error is None, sample.error
    assert sample.scores is not None and sample.scores["osworld_scorer"].value == 1.0
    assert not left.exists(), "the killed run's desktop state is still there"
    assert not [p for p in Path("/proc").glob("[0-9]*") if _uid(p) == uid], "its processes still run"


def _uid(proc: Path) -> int:
    try:
        return proc.stat().st_uid
    except OSError:
        return -1


def test_a_sample_whose_desktop_cannot_start_fails_the_run(
    osworld_root: Path, desktop_ready: None, tmp_path: Path
) -> None:
    from tests.runner._recording_server import recording_server

    # bubblewrap as on a host that allows no namespaces (an unprivileged container): no desktop starts.
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"
    )
    (fake / "bwrap").chmod(0o755)
    forge = Path(sys.executable).with_name("forge-eval")
    command = [str(forge), "run", "osworld", "--seeds", "1", "--data-dir", str(osworld_root)]
    command += ["-T", f"task_ids={VLC_TASK}", "-T", "max_steps=1", "--out", str(tmp_path / "run")]
    with recording_server() as (url, _):
        done = subprocess.run(
            [*command, "--model", "openai-api/vllm/m", "--model-base-url", url],
            env={**os.environ, "PATH": f"{fake}:{os.environ['PATH']}"},
            capture_output=True,
            text=True,
            timeout=600,
        )
    assert done.returncode != 0, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    assert "the OSWorld desktop did not start" in errors[0] and "namespace" in errors[0], errors
    assert "Traceback" not in done.stderr
