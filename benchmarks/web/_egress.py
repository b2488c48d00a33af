"""The egress gate of a live-web episode: a SOCKS5 proxy that connects only where the policy allows.

Chromium follows redirects and opens connections without asking Playwright's router, and it resolves
names itself, so on the live web a redirect to 127.0.0.1 or a name that resolves to a private address
would reach the host. An online episode's context therefore sends every connection through this gate
(Playwright sends loopback through a context's proxy too): the gate resolves the name, checks every
address (`NetworkPolicy.check_connection`) and connects to an address it checked, so a DNS answer that
changes between check and use (rebinding) changes nothing.

Written here rather than taken from a library: the check has to run on the resolved address at connect
time, inside the episode's event loop, and the protocol subset Chromium uses (SOCKS5, no
authentication, CONNECT) is a few lines. The same port also answers HTTP proxy requests, the proxy
protocol that programs configured by `HTTP(S)_PROXY` speak without extra packages (MCP-Atlas's web-API
servers): CONNECT, and a request for an absolute http(s) URL, which the gate sends on itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import socket
import ssl
from urllib.parse import urlsplit

from forge_eval.benchmarks.web._policy import IPAddress, NetworkPolicy, Refused, normal_host

log = logging.getLogger(__name__)

# SOCKS5 reply codes (RFC 1928 §6).
_OK, _NOT_ALLOWED, _UNREACHABLE, _REFUSED, _BAD_COMMAND, _BAD_ADDRESS = 0, 2, 4, 5, 7, 8
#: The same outcomes as an HTTP proxy's status line.
_HTTP_STATUS = {_OK: b"200 Connection established", _NOT_ALLOWED: b"403 Forbidden"}
#: What an HTTP proxy request may ask for, and its default port.
_HTTP_PORTS = {"connect": 0, "http": 80, "https": 443}


class EgressGate:
    """One episode's SOCKS5 gate on 127.0.0.1; `refusals` maps (host, port) to why it was refused."""

    def __init__(self, policy: NetworkPolicy, connect_timeout_s: float) -> None:
        self.policy = policy
        self.connect_timeout_s = connect_timeout_s
        self.refusals: dict[tuple[str, int], str] = {}
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> str:
        """Listen on a free loopback port; returns the proxy server URL for the browser context."""
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        return f"socks5://127.0.0.1:{port}"

    async def close(self) -> None:
        for writer in list(self._writers):
            writer.close()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            first = await reader.readexactly(1)
            if first == b"\x05":
                upstream = await self._handshake(reader, writer)
            else:
                upstream = await self._http_connect(first, reader, writer)
            if upstream is not None:
                await _splice(reader, writer, *upstream)
        except (
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            OSError,
        ) as e:  # hung up mid-handshake
            log.debug("egress gate connection ended: %s", e)
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _handshake(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        (count,) = await reader.readexactly(1)
        methods = await reader.readexactly(count)
        if 0 not in methods:
            writer.write(b"\x05\xff")  # no acceptable method: only "no authentication" is offered
            return None
        writer.write(b"\x05\x00")
        _, command, _, kind = await reader.readexactly(4)
        if kind == 1:
            host = str(ipaddress.IPv4Address(await reader.readexactly(4)))
        elif kind == 4:
            host = str(ipaddress.IPv6Address(await reader.readexactly(16)))
        elif kind == 3:
            host = (await reader.readexactly((await reader.readexactly(1))[0])).decode("ascii", "replace")
        else:
            return await _reply(writer, _BAD_ADDRESS)
        port = int.from_bytes(await reader.readexactly(2), "big")
        if command != 1:
            return await _reply(writer, _BAD_COMMAND)
        code, upstream = await self._open(host, port)
        await _reply(writer, code)
        return upstream

    async def _http_connect(
        self, first: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        """An HTTP proxy request: `CONNECT host:port` is admitted as a SOCKS5 CONNECT is; a request for an
        absolute http(s) URL (axios sends https ones so too) is sent on by the gate, over TLS for https,
        asking the site to close the connection after its answer."""
        head = first + await reader.readuntil(b"\r\n\r\n")
        line, _, headers = head.partition(b"\r\n")
        method, target, version = [*line.decode("latin-1").split(" "), "", ""][:3]
        parts = urlsplit(target if method != "CONNECT" else f"//{target}")
        scheme = parts.scheme if method != "CONNECT" else "connect"
        try:
            port = parts.port or _HTTP_PORTS.get(scheme, 0)
        except ValueError:
            port = 0
        if scheme not in _HTTP_PORTS or not parts.hostname or not port:
            writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            await writer.drain()
            return None
        code, upstream = await self._open(parts.hostname, port, tls=scheme == "https")
        if upstream is None or method == "CONNECT":
            status = _HTTP_STATUS.get(code, b"502 Bad Gateway")
            end = b"\r\n\r\n" if upstream else b"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            writer.write(b"HTTP/1.1 " + status + end)
            await writer.drain()
            return upstream
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        hop = (b"proxy-", b"connection:", b"keep-alive:")
        kept = [h for h in headers.split(b"\r\n") if h and not h.lower().startswith(hop)]
        request = [f"{method} {path} {version}".encode("latin-1"), *kept, b"Connection: close"]
        upstream[1].write(b"\r\n".join(request) + b"\r\n\r\n")
        return upstream

    async def _open(
        self, host: str, port: int, tls: bool = False
    ) -> tuple[int, tuple[asyncio.StreamReader, asyncio.StreamWriter] | None]:
        """A connection to an admitted address of `host` (TLS to `host` when `tls`), with the SOCKS5 reply
        code saying how it went."""
        try:
            addresses = await self._admit(host, port)
        except Refused as e:
            self.refusals[(normal_host(host), port)] = str(e)
            log.info("egress gate refused %s:%s: %s", host, port, e)
            return _NOT_ALLOWED, None
        if not addresses:
            return _UNREACHABLE, None
        for address in addresses:
            try:
                context = ssl.create_default_context() if tls else None
                connecting = asyncio.open_connection(
                    str(address), port, ssl=context, server_hostname=host if tls else None
                )
                upstream = await asyncio.wait_for(connecting, self.connect_timeout_s)
            except (OSError, TimeoutError):
                continue
            return _OK, upstream
        return _REFUSED, None

    async def _admit(self, host: str, port: int) -> list[IPAddress]:
        """The checked addresses of `host` (empty when it does not resolve); raises `Refused`."""
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError):
            self.policy.check_connection(host, port, [])  # a refused name still says why
            return []
        addresses = list(dict.fromkeys(ipaddress.ip_address(str(i[4][0]).split("%")[0]) for i in infos))
        self.policy.check_connection(host, port, addresses)
        return addresses


async def _reply(writer: asyncio.StreamWriter, code: int) -> None:
    writer.write(bytes((5, code, 0, 1, 0, 0, 0, 0, 0, 0)))
    await writer.drain()


async def _splice(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    up_reader: asyncio.StreamReader,
    up_writer: asyncio.StreamWriter,
) -> None:
    """Copy bytes both ways until both sides are done (a reset on either side ends both)."""

    def hang_up() -> None:
        for w in (writer, up_writer):
            w.close()

    async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        try:
            while data := await src.read(1 << 16):
                dst.write(data)
                await dst.drain()
            if dst.can_write_eof():
                with contextlib.suppress(OSError):
                    dst.write_eof()
        except OSError:
            hang_up()

    try:
        await asyncio.gather(pump(reader, up_writer), pump(up_reader, writer))
    finally:
        hang_up()
