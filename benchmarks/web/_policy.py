"""Where an episode's browser may go: http(s) to the benchmark's own sites, the live web where the
benchmark needs it, and nothing else.

The model chooses the URLs (goto, the links it clicks, the forms it posts, the pages those open), so
nothing it names may reach the host: no `file:` (the host's files, the task's own data), no browser-
internal schemes, no loopback, private or link-local address except the benchmark's own ports. One
policy answers for every way a request is made: the goto action asks it first (for a clear error), the
context's router asks it for every request Playwright routes, and on the live web the egress gate
(`_egress.py`) asks it again for every connection Chromium opens, after DNS.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Sequence
from urllib.parse import urlsplit

from forge_eval.benchmarks.web._config import BrowserConfig

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_DEFAULT_PORTS = {"http": 80, "https": 443}
_KINDS = ("unspecified", "loopback", "link_local", "private", "multicast", "reserved")


class Refused(Exception):
    """A request the policy does not allow; the message says why, in words the agent is shown."""


def address_kind(address: IPAddress) -> str | None:
    """None for a public address, else what kind of non-public address it is ("loopback", ...)."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped  # ::ffff:127.0.0.1 is 127.0.0.1
    if address.is_global and not address.is_multicast:
        return None
    kind = next((k for k in _KINDS if getattr(address, f"is_{k}")), "non-public")
    return kind.replace("_", "-")


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return None


def normal_host(host: str | None) -> str:
    """A hostname as the checks compare it: lower case, no IPv6 brackets, no trailing dot."""
    return (host or "").strip("[]").rstrip(".").lower()


def _host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def origin(url: str) -> tuple[str, int]:
    """(host, port) of a URL, as the checks compare them."""
    parts = urlsplit(url)
    return normal_host(parts.hostname), parts.port or _DEFAULT_PORTS.get(parts.scheme, 80)


class NetworkPolicy:
    """One episode's rules, from its `BrowserConfig`.

    Allowed: http(s) to a host of `host_map` (served from its local site), to an origin of
    `local_origins` or of a `host_map` target (the benchmark's own servers), and, online only, to any
    public host (restricted to `allowed_hosts` when given). Refused: every other scheme, every other
    loopback / private / link-local address (literal or after DNS), `localhost` names, and when offline
    every host that is not the benchmark's.
    """

    def __init__(self, config: BrowserConfig) -> None:
        self.config = config
        self.mapped = {normal_host(h): base.rstrip("/") for h, base in config.host_map.items()}
        self.own = {origin(o) for o in (*config.local_origins, *config.host_map.values())}
        self.own_addresses = {(a, port) for host, port in self.own for a in _addresses(host)}

    def route(self, url: str) -> str | None:
        """Where the router gets `url` from: a local URL it fetches itself, or None for Chromium's own
        network (the live web, through the egress gate). Raises `Refused` when `url` may not load."""
        parts = urlsplit(url.strip())
        if parts.scheme not in _DEFAULT_PORTS:
            scheme = f"'{parts.scheme}:' URLs" if parts.scheme else "URLs without http:// or https://"
            raise Refused(f"{scheme} are not loaded; only http:// and https:// are")
        host = normal_host(parts.hostname)
        try:
            port = parts.port or _DEFAULT_PORTS[parts.scheme]
        except ValueError:
            raise Refused("the URL's port is not a number from 0 to 65535") from None
        if not host:
            raise Refused("the URL names no host")
        # The local URL is rebuilt from what was checked, so the fetch cannot parse another host out of
        # it (URL parsers disagree on odd input such as backslashes before an '@').
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        if host in self.mapped:
            return self.mapped[host] + path
        if (host, port) in self.own:
            return f"{parts.scheme}://{_host_port(host, port)}{path}" if self.config.offline else None
        self._check_name(host, port)
        return None

    def check_connection(self, host: str, port: int, addresses: Sequence[IPAddress]) -> None:
        """Refuse a connection Chromium opens to `host`:`port`, which DNS resolved to `addresses`.

        Every address must be public or one of the benchmark's own (address, port): a name whose
        answers mix a public and a private address is refused, whichever one would be used.
        """
        host = normal_host(host)
        if (host, port) not in self.own:
            self._check_name(host, port)
        for address in addresses:
            kind = None if (address, port) in self.own_addresses else address_kind(address)
            if kind is not None:
                shown = host if str(address) == host else f"{host} resolves to {address}, which"
                raise Refused(f"{shown} is a {kind} address, and port {port} there is not this benchmark's")

    def _check_name(self, host: str, port: int) -> None:
        """What the name alone tells (before DNS): `localhost` names, literal addresses, offline, the
        allow-list."""
        literal = _literal(host)
        kind = "loopback" if host == "localhost" or host.endswith(".localhost") else None
        kind = kind or (address_kind(literal) if literal is not None else None)
        sites = self.sites()
        if kind is not None:
            address = f"{_host_port(host, port)} is a {kind} address"
            raise Refused(f"{address} that is not one of this benchmark's sites ({sites})")
        if self.config.offline:
            raise Refused(f"{host} is not one of this benchmark's sites ({sites}); the run is offline")
        allowed = self.config.allowed_hosts
        if allowed is not None and host not in allowed:
            raise Refused(f"{host} is not one of the allowed hosts ({', '.join(allowed) or 'none'})")

    def sites(self) -> str:
        """The benchmark's own hosts, for messages."""
        names = sorted(self.mapped) or [f"{h}:{p}" for h, p in sorted(self.own)]
        return ", ".join(names) or "none"


def _addresses(host: str) -> set[IPAddress]:
    """The addresses of one of the benchmark's own hosts (a literal, or a name such as localhost)."""
    literal = _literal(host)
    if literal is not None:
        return {literal}
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except socket.gaierror:
        return set()
    return {a for info in infos if (a := _literal(str(info[4][0]))) is not None}
