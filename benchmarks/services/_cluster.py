"""`ServiceCluster`: every local service on its own 127.0.0.1 port, in one background thread.

The servers run on their own event loop in a daemon thread rather than on Inspect's loop, because
Inspect creates a new loop per `eval()` call while the services must outlive it (one cluster per
process, shared by all tasks and samples).
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import socket
import threading
import time
from collections.abc import Mapping, Sequence
from typing import ClassVar

import uvicorn

from forge_eval._errors import ForgeError
from forge_eval._net import tcp_socket
from forge_eval._registry import Registry
from forge_eval.benchmarks.services._app import Service
from forge_eval.benchmarks.services._servers import SERVICES

HOST = "127.0.0.1"
START_TIMEOUT_S = 15.0


class ServiceStartError(ForgeError):
    """A service could not be started (port taken, server failed to come up)."""


class ServiceCluster:
    """Starts the named services (default: all) on loopback and hands out their base URLs.

    Args:
        services: Service names to run; None = every registered service.
        ports: Fixed port per service name; missing or 0 = a free port chosen by the OS.
        catalog: The registry the names come from (default `SERVICES`; a benchmark with its own
            services, such as Claw-Eval's mocks, passes its own).
    """

    _shared: ClassVar[dict[str, ServiceCluster]] = {}
    _shared_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(
        self,
        services: Sequence[str] | None = None,
        ports: Mapping[str, int] | None = None,
        catalog: Registry[Service] | None = None,
    ) -> None:
        catalog = catalog or SERVICES
        names = list(services) if services is not None else catalog.names()
        self._services = [catalog.get(n) for n in names]
        self._ports = dict(ports or {})
        self._urls: dict[str, str] = {}
        self._servers: list[uvicorn.Server] = []
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._failure: BaseException | None = None

    @classmethod
    def shared(cls, catalog: Registry[Service] | None = None) -> ServiceCluster:
        """The process-wide cluster of all services of `catalog`, started on first use, stopped at exit."""
        catalog = catalog or SERVICES
        with cls._shared_lock:
            if catalog.kind not in cls._shared:
                cluster = cls(catalog=catalog)
                cluster.start()
                atexit.register(cluster.stop)
                cls._shared[catalog.kind] = cluster
            return cls._shared[catalog.kind]

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def urls(self) -> dict[str, str]:
        """Base URL per service name (empty until started)."""
        return dict(self._urls)

    def url(self, service: str) -> str:
        try:
            return self._urls[service]
        except KeyError:
            raise ServiceStartError(
                f"service '{service}' is not running in this cluster",
                hint=f"running services: {', '.join(sorted(self._urls)) or '(none; call start())'}",
            ) from None

    def start(self) -> None:
        """Bind every port, start the servers and wait until all accept connections (idempotent)."""
        with self._lock:
            if self.running:
                return
            sockets = self._bind_all()
            self._servers = [
                uvicorn.Server(uvicorn.Config(s.app(), log_level="warning", access_log=False, lifespan="off"))
                for s in self._services
            ]
            self._failure = None
            self._thread = threading.Thread(
                target=self._serve, args=(sockets,), name="forge-services", daemon=True
            )
            self._thread.start()
            self._wait_started(sockets)

    def stop(self) -> None:
        """Ask every server to exit and wait for the thread (idempotent)."""
        with self._lock:
            for server in self._servers:
                server.should_exit = True
            if self._thread is not None:
                self._thread.join(timeout=10)
            self._thread = None
            self._servers = []
            self._urls = {}

    def __enter__(self) -> ServiceCluster:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _bind_all(self) -> list[socket.socket]:
        sockets: list[socket.socket] = []
        for service in self._services:
            port = self._ports.get(service.name, 0)
            sock = tcp_socket()
            try:
                sock.bind((HOST, port))
            except OSError as e:
                sock.close()
                for s in sockets:
                    s.close()
                raise ServiceStartError(
                    f"cannot start the {service.name} service on {HOST}:{port}: {e.strerror or e}",
                    hint="another process holds that port; stop it or use port 0 (a free port)",
                ) from None
            sockets.append(sock)
        return sockets

    def _serve(self, sockets: list[socket.socket]) -> None:
        async def main() -> None:
            await asyncio.gather(
                *(server.serve(sockets=[sock]) for server, sock in zip(self._servers, sockets, strict=True))
            )

        try:
            asyncio.run(main())
        except BaseException as e:  # surfaced by start(); the thread must not die silently
            self._failure = e
            logging.getLogger(__name__).error("local services stopped: %s", e)

    def _wait_started(self, sockets: list[socket.socket]) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not all(s.started for s in self._servers) and self.running and time.monotonic() < deadline:
            time.sleep(0.01)
        if not all(s.started for s in self._servers):
            for server in self._servers:
                server.should_exit = True
            reason = f": {self._failure}" if self._failure else f" within {START_TIMEOUT_S:.0f} s"
            raise ServiceStartError(f"the local services did not start{reason}")
        self._urls = {
            service.name: f"http://{HOST}:{sock.getsockname()[1]}"
            for service, sock in zip(self._services, sockets, strict=True)
        }
