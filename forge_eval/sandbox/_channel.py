"""A loopback port only this run can use, carrying each connection to a server inside a sandbox.

Upstream's clients (OSWorld's controllers, Claw-Eval's sandbox runner) reach their in-box server by an
`http://127.0.0.1:PORT` URL, so the grader's requests need a TCP port on the host's loopback. Two rules
make that port a channel the grader can trust:

- Who may connect: the peer's socket must be held by one of the run's own processes (found in
  /proc/net/tcp by its inode, then among those processes' file descriptors). Any other host user's
  connection is closed before a byte is read: the in-box server has no credential of its own.
- Where it leads: this process opens each connection from outside the box, into the box's network
  namespace (`setns` in a short-lived thread), so nothing inside the box holds the host side of the
  channel: no program the agent runs can stop it, or take its sockets and answer in its place.

Why by hand: socat or a forwarder inside the box would be a process the agent's uid can signal or ptrace
(the takeover this module exists to rule out), and no library forwards into another network namespace.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import socket
import threading
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TypeVar

from forge_eval.sandbox._bridge import _pump

#: Opens the box side of one connection.
Connect = Callable[[], Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]]
logger = logging.getLogger(__name__)
T = TypeVar("T")
_CLONE_NEWNET = 0x40000000
_LOOPBACK_HEX = "0100007F"


class NetworkNamespace:
    """A sandbox's network namespace, held open by a file descriptor (a reused pid cannot swap it)."""

    def __init__(self, pid: int) -> None:
        self._fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC)

    @property
    def path(self) -> str:
        """A path naming this namespace while it is held (`nsenter --net=PATH`)."""
        return f"/proc/{os.getpid()}/fd/{self._fd}"

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def run(self, action: Callable[[], T]) -> T:
        """`action()` in a thread that entered this namespace and then ends: a socket keeps the namespace
        it was made in, and /proc/thread-self/net shows this one's tables (this process's own threads
        stay in the host's namespace)."""
        done: list[T | BaseException] = []

        def enter() -> None:
            try:
                if _setns(self._fd, _CLONE_NEWNET) != 0:
                    errno = ctypes.get_errno()
                    raise OSError(
                        errno, f"cannot enter the sandbox's network namespace: {os.strerror(errno)}"
                    )
                done.append(action())
            except BaseException as exc:
                done.append(exc)

        thread = threading.Thread(target=enter, name="forge-netns")
        thread.start()
        thread.join()
        if isinstance(done[0], BaseException):
            raise done[0]
        return done[0]

    def listener(self, port: int) -> str | None:
        """The inode of the socket listening on 127.0.0.1:`port` (or any address) here; None if none."""
        return self.run(lambda: _listening_inode(port))

    def connector(self, port: int, trusted: Callable[[str | None], bool] = lambda _: True) -> Connect:
        """Connects to 127.0.0.1:`port` of this namespace (the box's own loopback), then keeps the
        connection only if `trusted(inode of the listener on port)`. Checked after connecting: a listener
        that is still there now was the one reached, since two cannot listen on one port."""

        async def connect() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
            sock = self.run(lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            sock.setblocking(False)
            try:
                await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
                if not trusted(self.listener(port)):
                    raise UntrustedListener(f"port {port} in the sandbox: not the trusted listener")
            except BaseException:
                sock.close()
                raise
            return await asyncio.open_connection(sock=sock)

        return connect


class UntrustedListener(OSError):
    """The box's port is served by another socket than the one the run trusts (the server was replaced)."""


def _listening_inode(port: int) -> str | None:
    for table in ("/proc/thread-self/net/tcp", "/proc/thread-self/net/tcp6"):
        with contextlib.suppress(FileNotFoundError), open(table) as rows:
            for line in rows.read().splitlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                    return fields[9]
    return None


def socket_holders(inode: str, pids: Iterable[int]) -> list[int]:
    """Those of `pids` that hold the socket `inode` (root reads any process's descriptors)."""
    wanted = f"socket:[{inode}]"
    holders = []
    for pid in pids:
        fds = Path(f"/proc/{pid}/fd")
        with contextlib.suppress(OSError):
            for fd in os.listdir(fds):
                with contextlib.suppress(OSError):
                    if os.readlink(fds / fd) == wanted:
                        holders.append(pid)
                        break
    return holders


_LIBC = ctypes.CDLL(None, use_errno=True)


def _setns(fd: int, nstype: int) -> int:
    return _LIBC.setns(fd, nstype)


class PrivatePort:
    """127.0.0.1:`port` on the host, for `allowed()`'s processes only, each connection piped to `connect()`.

    It serves from a thread of its own (its callers are threads and event loops alike); `close()` drops
    every stream. `refused` counts the connections closed because their peer was not the run's.
    """

    def __init__(self, connect: Connect, allowed: Callable[[], Iterable[int]] | None = None) -> None:
        self._connect = connect
        self._allowed = allowed or (lambda: (os.getpid(),))
        self.refused = 0
        self._loop = asyncio.new_event_loop()
        self._stopped = asyncio.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, name=f"forge-port-{self.port}", daemon=True)
        self._thread.start()
        self._ready.wait()

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        streams: set[asyncio.Task[None]] = set()

        async def accept(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            assert task is not None
            streams.add(task)
            try:
                await self._pipe(client_r, client_w)
            except asyncio.CancelledError:  # close() ends the streams still open: not an error
                client_w.close()
            finally:
                streams.discard(task)

        async def main() -> None:
            server = await asyncio.start_server(accept, sock=self._listener)
            self._ready.set()
            await self._stopped.wait()
            server.close()
            for task in list(streams):
                task.cancel()
            await asyncio.gather(*streams, return_exceptions=True)

        try:
            self._loop.run_until_complete(main())
        finally:
            self._ready.set()
            self._loop.close()

    async def _pipe(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        peer = client_w.get_extra_info("peername")
        if not held_by(peer[1], self.port, self._allowed()):
            self.refused += 1
            client_w.close()
            return
        try:
            server_r, server_w = await self._connect()
        except OSError as exc:  # not up yet, gone, or replaced: a failed read, never a forged one
            log = logger.warning if isinstance(exc, UntrustedListener) else logger.debug
            log("closed a connection to the sandbox's server: %s", exc)
            client_w.close()
            return
        try:
            await asyncio.gather(_pump(client_r, server_w), _pump(server_r, client_w))
        finally:
            for writer in (client_w, server_w):
                writer.close()

    def close(self) -> None:
        if self._thread.is_alive():
            with contextlib.suppress(RuntimeError):  # the loop has already ended
                self._loop.call_soon_threadsafe(self._stopped.set)
            self._thread.join(10)
        self._listener.close()


def held_by(peer_port: int, port: int, pids: Iterable[int]) -> bool:
    """Whether the client socket 127.0.0.1:`peer_port` -> 127.0.0.1:`port` is one of `pids`' fds."""
    inode = _client_inode(peer_port, port)
    return inode is not None and bool(socket_holders(inode, pids))


def _client_inode(peer_port: int, port: int) -> str | None:
    """The inode of the loopback socket whose local port is `peer_port` and remote port `port`."""
    local, remote = f"{_LOOPBACK_HEX}:{peer_port:04X}", f"{_LOOPBACK_HEX}:{port:04X}"
    with open("/proc/net/tcp") as table:
        for line in table.read().splitlines()[1:]:
            fields = line.split()
            if fields[1] == local and fields[2] == remote:
                return fields[9]
    return None
