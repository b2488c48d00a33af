"""Every server socket forge-eval binds itself has TCP_NODELAY: uvicorn sets it only on sockets it creates,
and without it each answer on a keep-alive connection waited for the client's delayed ACK (~40 ms)."""

from __future__ import annotations

import socket

from forge_eval.benchmarks.services import ServiceCluster
from forge_eval.models._socket import bind_socket
from forge_eval.proxy import Listener


def _nodelay(sock: socket.socket) -> bool:
    try:
        return bool(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
    finally:
        sock.close()


def test_proxy_listener_sets_nodelay() -> None:
    assert _nodelay(Listener(port=0).bind())


def test_embedded_model_socket_sets_nodelay() -> None:
    assert _nodelay(bind_socket(None))


def test_service_sockets_set_nodelay() -> None:
    sockets = ServiceCluster(["mail"])._bind_all()
    assert sockets and all(_nodelay(s) for s in sockets)
