"""Sockets for the servers forge-eval binds itself (proxy, embedded model, tool services)."""

import socket


def tcp_socket(family: socket.AddressFamily = socket.AF_INET) -> socket.socket:
    """An unbound TCP socket for a server we hand to uvicorn as `sockets=[...]`.

    uvicorn sets TCP_NODELAY only on sockets it creates; accepted connections inherit it from the
    listening socket on Linux. Without it every answer on a keep-alive connection (the OpenAI SDK,
    aiohttp, httpx) waited ~40 ms: the body, written after the headers, sat in Nagle's buffer until the
    client's delayed ACK (bench/proxy_overhead.py: 48 ms added per proxied call before, ~3 ms after).
    """
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock
