"""Web tests need Playwright and a Chromium (scripts/setup.d/50-chromium.sh); they skip without them."""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import socket
import threading
import time
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import psutil
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse
from starlette.routing import Route

from forge_eval.benchmarks.web import BrowserConfig, BrowserSession, browser_requirements

T = TypeVar("T")

_missing = browser_requirements()
if _missing:
    pytest.skip("no browser here: " + "; ".join(_missing), allow_module_level=True)

# One page with a target for every action; each handler writes what happened into #log.
TEST_PAGE = """<!doctype html><html><head><title>Action test page</title>
<style>body{margin:0;font:16px sans-serif} #scrollbox{position:absolute;left:700px;top:20px;width:200px;
height:100px;overflow:auto;border:1px solid #000} .abs{position:absolute}</style></head><body>
<button id="btn" class="abs" style="left:20px;top:20px;width:120px;height:40px">Click me</button>
<div id="hover" class="abs" style="left:200px;top:20px;width:120px;height:40px;background:#eee">Hover</div>
<input id="text" class="abs" style="left:20px;top:100px;width:200px;height:30px" placeholder="type here">
<div id="drag" class="abs" style="left:400px;top:20px;width:60px;height:60px;background:#f99">drag</div>
<a id="next" class="abs" href="/second" style="left:20px;top:160px">Next page</a>
<a id="tab" class="abs" href="/second?tab=1" target="_blank" style="left:20px;top:200px">New tab</a>
<a id="slow" class="abs" href="/slow" style="left:20px;top:240px">Slow page</a>
<div id="scrollbox"><div style="height:1000px">inner</div></div>
<pre id="log" class="abs" style="left:20px;top:300px"></pre>
<div style="height:3000px"></div>
<script>
const log = m => document.getElementById('log').textContent += m + '\\n';
btn.onclick = e => log(e.detail === 2 ? 'dblclick' : 'click');
btn.oncontextmenu = e => { e.preventDefault(); log('rightclick'); };
hover.onmouseenter = () => log('hover');
text.onkeydown = e => { if (e.key === 'Enter') log('enter:' + text.value); };
let dragging = false;
drag.onmousedown = () => dragging = true;
document.onmouseup = e => { if (dragging) log('drop:' + e.clientX + ',' + e.clientY); dragging = false; };
window.onscroll = () => document.title = 'scrolled ' + Math.round(scrollY);
scrollbox.onscroll = () => log('inner:' + scrollbox.scrollTop);
</script></body></html>"""


async def _page(request: Request) -> HTMLResponse:
    return HTMLResponse(TEST_PAGE)


async def _second(request: Request) -> HTMLResponse:
    world = request.headers.get("x-forge-world", "")
    return HTMLResponse(
        f"<html><head><title>Second</title></head><body><h1>Second page</h1>"
        f"<p id=w>world={world}</p></body></html>"
    )


async def _slow(request: Request) -> HTMLResponse:
    await anyio.sleep(0.6)
    return HTMLResponse("<html><head><title>Slow done</title></head><body>slow</body></html>")


async def _redirecting(request: Request) -> HTMLResponse:
    # Navigates by script right after load: observations must survive the document being replaced.
    return HTMLResponse(
        "<html><head><title>Bounce</title></head><body><script>"
        "setTimeout(() => location.href = '/second', 30)</script></body></html>"
    )


async def _hello(request: Request) -> PlainTextResponse:
    return PlainTextResponse("hello from the mapped site")


async def _redirect(request: Request) -> RedirectResponse:
    return RedirectResponse(
        request.query_params["to"], status_code=int(request.query_params.get("status", 302))
    )


#: Where each way off the page sits on `/hostile`, in viewport pixels (a link, a popup, a script
#: navigation and a form post, all to the `to` URL; an iframe of it loads with the page).
HOSTILE_TARGETS = {"link": (60, 30), "popup": (60, 80), "script": (60, 130), "post": (60, 180)}


async def _hostile(request: Request) -> HTMLResponse:
    """A page of an allowed site that tries to lead the browser to `to` every way a page can."""
    to = request.query_params["to"]
    attr, js = html.escape(to), html.escape(json.dumps(to))
    pos = {
        k: f"position:absolute;left:{x - 50}px;top:{y - 15}px;width:100px;height:30px"
        for k, (x, y) in HOSTILE_TARGETS.items()
    }
    return HTMLResponse(
        f"<!doctype html><html><head><title>Hostile</title></head><body style='margin:0'>"
        f'<a href="{attr}" style="{pos["link"]}">link</a>'
        f'<button style="{pos["popup"]}" onclick="window.open({js})">popup</button>'
        f'<button style="{pos["script"]}" onclick="location.href = {js}">script</button>'
        f'<form method=post action="{attr}"><input type=hidden name=q value=1>'
        f'<button style="{pos["post"]}">post</button></form>'
        f'<iframe src="{attr}" style="position:absolute;left:300px;top:20px;width:600px;height:300px">'
        "</iframe></body></html>"
    )


def kill_chromium_children() -> list[psutil.Process]:
    """SIGKILL every Chromium process descended from this test process (never anyone else's); returns them."""
    killed = []
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.NoSuchProcess):  # a short-lived helper may exit while we look
            if "chrom" in child.name():
                child.kill()
                killed.append(child)
    return killed


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(app: Starlette) -> Iterator[str]:
    """Run `app` on a free 127.0.0.1 port in a thread; yields its base URL."""
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(5)


@pytest.fixture(scope="session")
def test_site() -> Iterator[str]:
    """A real HTTP server with the action test page, on 127.0.0.1."""
    app = Starlette(
        routes=[
            Route("/", _page),
            Route("/second", _second),
            Route("/slow", _slow),
            Route("/bounce", _redirecting),
            Route("/hello", _hello),
            Route("/redirect", _redirect, methods=["GET", "POST"]),
            Route("/hostile", _hostile),
        ]
    )
    yield from _serve(app)


@pytest.fixture(scope="session")
def site_config(test_site: str) -> BrowserConfig:
    """An episode whose benchmark's own server is the test site."""
    return BrowserConfig(local_origins=(test_site,))


#: What the host port that is not the benchmark's answers; no observation may ever show it.
SECRET = "forge-host-secret-4f1c"


@dataclass
class HostPort:
    """A server on a 127.0.0.1 port that no episode may reach; `hits` lists the paths it was asked for."""

    url: str
    hits: list[str] = field(default_factory=list)


@pytest.fixture
def host_port() -> Iterator[HostPort]:
    """A fresh host server per test (its own port and hit list)."""
    hits: list[str] = []

    async def secret(request: Request) -> HTMLResponse:
        hits.append(request.url.path)
        return HTMLResponse(f"<title>{SECRET}</title>{SECRET}")

    app = Starlette(routes=[Route("/{path:path}", secret, methods=["GET", "POST"])])
    for url in _serve(app):
        yield HostPort(url, hits)


class LoopRunner:
    """Runs the tests' coroutines on one event loop, so they share one browser session (driver start
    costs 0.5-4 s; each test still gets its own context)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()

    def __call__(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(coro)

    def close(self) -> None:
        self.loop.run_until_complete(BrowserSession.close_all())
        self.loop.close()


@pytest.fixture(scope="session")
def run() -> Iterator[LoopRunner]:
    runner = LoopRunner()
    yield runner
    runner.close()
