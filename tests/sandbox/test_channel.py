"""`PrivatePort`: a host loopback port only the run may use, leading into a sandbox's network namespace, to
the listener trusted at start and no other.

The server sits in a network namespace of its own (`unshare --net`), as a sandbox's does: the host's
loopback cannot reach it except through the port.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from forge_eval.sandbox import NetworkNamespace, PrivatePort
from tests._nobody import as_nobody

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ip"),
    reason="entering another network namespace needs root, unshare and ip (util-linux, iproute2)",
)
PORT = 8000


def _serve(folder: Path, enter: list[str]) -> subprocess.Popen[bytes]:
    """`python -m http.server` on 127.0.0.1:PORT of the namespace `enter` puts it in, serving `folder`."""
    command = f"ip link set lo up && exec {sys.executable} -m http.server --bind 127.0.0.1 {PORT}"
    return subprocess.Popen(
        [*enter, "sh", "-c", command],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=open(folder / "requests.log", "wb"),  # noqa: SIM115 (the server's, closed with it)
    )


def _wait_listening(network: NetworkNamespace) -> str:
    deadline = time.monotonic() + 20
    while (inode := network.listener(PORT)) is None:
        assert time.monotonic() < deadline, "the server in the namespace did not listen"
        time.sleep(0.05)
    return inode


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[bytes], NetworkNamespace]]:
    folder = tmp_path / "a"
    folder.mkdir()
    (folder / "answer.txt").write_text("the real answer")
    server = _serve(folder, ["unshare", "--net"])
    deadline = time.monotonic() + 20
    while os.readlink(f"/proc/{server.pid}/ns/net") == os.readlink("/proc/self/ns/net"):  # not yet unshared
        assert time.monotonic() < deadline, "unshare --net did not start"
        time.sleep(0.01)
    network = NetworkNamespace(server.pid)
    try:
        yield folder, server, network
    finally:
        server.kill()
        server.wait()
        network.close()


def test_the_run_reaches_the_server_and_no_other_uid_does(
    served: tuple[Path, subprocess.Popen[bytes], NetworkNamespace], tmp_path: Path
) -> None:
    _folder, _server, network = served
    trusted = _wait_listening(network)
    port = PrivatePort(network.connector(PORT, lambda inode: inode == trusted))
    try:
        url = f"http://127.0.0.1:{port.port}/answer.txt"
        assert httpx.get(url, timeout=10).text == "the real answer"
        # the server is out of the host's reach but through the port
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"http://127.0.0.1:{PORT}/answer.txt", timeout=2)
        stranger = (
            "import httpx, json\n"
            f"try: print(json.dumps(httpx.get({url!r}, timeout=10).text))\n"
            "except httpx.HTTPError as exc: print(json.dumps(type(exc).__name__))\n"
        )
        done = as_nobody(sys.executable, "-c", stranger)
        assert json.loads(done.stdout) in ("ReadError", "RemoteProtocolError"), done  # closed unanswered
        assert port.refused == 1
        # a process of the run's may be let in by name (upstream's client in a driver process)
        allowed: list[int] = []
        port.close()
        port = PrivatePort(network.connector(PORT), allowed=lambda: allowed)
        url = f"http://127.0.0.1:{port.port}/answer.txt"
        fetch = f"import httpx, sys; sys.stdin.read(); print(httpx.get({url!r}).text)"
        child = subprocess.Popen(
            [sys.executable, "-c", fetch], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        allowed.append(child.pid)
        out, _ = child.communicate("", timeout=30)
        assert out.strip() == "the real answer" and port.refused == 0
    finally:
        port.close()


def test_a_replaced_listener_is_never_reached(
    served: tuple[Path, subprocess.Popen[bytes], NetworkNamespace], tmp_path: Path
) -> None:
    folder, server, network = served
    trusted = _wait_listening(network)
    port = PrivatePort(network.connector(PORT, lambda inode: inode == trusted))
    url = f"http://127.0.0.1:{port.port}/answer.txt"
    forged = tmp_path / "b"
    forged.mkdir()
    (forged / "answer.txt").write_text("forged")
    try:
        assert httpx.get(url, timeout=10).text == "the real answer"
        server.kill()
        server.wait()
        # another server on the same port of the same namespace (held open by `network`)
        impostor = _serve(forged, ["nsenter", f"--net={network.path}"])
        try:
            assert _wait_listening(network) != trusted
            with pytest.raises(httpx.HTTPError):
                httpx.get(url, timeout=10)
            assert "GET" not in (forged / "requests.log").read_text()  # not one request reached it
        finally:
            impostor.kill()
            impostor.wait()
    finally:
        port.close()
