"""The embedded model server's listening socket, bound by the parent or by the server itself."""

import errno
import socket

from forge_eval._errors import ForgeError
from forge_eval._net import tcp_socket

HOST = "127.0.0.1"


def bind_socket(port: int | None) -> socket.socket:
    """A listening socket on 127.0.0.1 (`port` None: a free one).

    Binding before the model loads turns a busy port into an immediate, clear error, and lets a
    parent hand the socket to its child (no race between picking a free port and using it).
    """
    sock = tcp_socket()
    try:
        sock.bind((HOST, port or 0))
    except OSError as e:
        sock.close()
        if e.errno == errno.EADDRINUSE:
            raise ForgeError(
                f"port {port} on {HOST} is already in use",
                hint="choose another port with --port (port= in Python), or leave it out to pick a free one",
            ) from None
        raise ForgeError(f"cannot listen on {HOST}:{port}: {e.strerror}") from None
    sock.listen(128)
    return sock
