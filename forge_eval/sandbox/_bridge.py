"""Host side of a sandbox's port forwards: a Unix-socket (or loopback TCP) listener piping to one target.

Inside the sandbox, socat listens on 127.0.0.1:PORT and connects to a bind-mounted Unix socket; this
module serves that socket on the host and connects each accepted stream to the forward's target (a
"host:port" or a Unix socket path). It runs in the caller's event loop rather than as a host socat
process, so a crash of the caller cannot leave a bridge process behind, and there is nothing to reap.
"""

import asyncio
import contextlib
from pathlib import Path

from forge_eval._errors import UsageError

_CHUNK = 65536


def parse_target(target: str) -> tuple[str, int] | Path:
    """`"127.0.0.1:8400"` -> (host, port); an absolute path -> a Unix socket path."""
    if target.startswith("/"):
        return Path(target)
    host, sep, port = target.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise UsageError(
            f"sandbox forward target {target!r} is neither HOST:PORT nor an absolute Unix socket path",
            hint='write it as "127.0.0.1:8400" or "/path/to/server.sock"',
        )
    return host, int(port)


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(_CHUNK):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        pass


class Bridge:
    """Accepts connections on a listener and pipes each to `target`; `close()` drops every stream."""

    def __init__(self, target: tuple[str, int] | Path) -> None:
        self.target = target
        self._server: asyncio.Server | None = None
        self._streams: set[asyncio.Task[None]] = set()

    async def listen_unix(self, path: Path) -> None:
        self._server = await asyncio.start_unix_server(self._accept, path=str(path))

    async def listen_tcp(self, host: str, port: int) -> None:
        self._server = await asyncio.start_server(self._accept, host, port)

    async def _accept(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._streams.add(task)
        try:
            if isinstance(self.target, Path):
                up_r, up_w = await asyncio.open_unix_connection(str(self.target))
            else:
                up_r, up_w = await asyncio.open_connection(*self.target)
        except OSError:
            client_w.close()
            self._streams.discard(task)
            return
        try:
            await asyncio.gather(_pump(client_r, up_w), _pump(up_r, client_w))
        finally:
            for w in (up_w, client_w):
                w.close()
            self._streams.discard(task)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for task in list(self._streams):
            task.cancel()
        for task in list(self._streams):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
