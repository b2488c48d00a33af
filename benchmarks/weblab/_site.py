"""The shared shape of a weblab site: a Starlette app with per-episode state and a check API.

Every request carries the episode's world id in `X-Forge-World` (the browser context sends it), so
concurrent episodes never see each other's carts or bookings. `GET /__state` returns the world's
state as JSON for verifiers; pages are plain server-rendered HTML with a little JavaScript, in one shared
style so that screenshots look like ordinary web sites.
"""

from __future__ import annotations

import copy
import html
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ClassVar, TypeVar

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from forge_eval.benchmarks.services import DEFAULT_WORLD, WORLD_HEADER

T = TypeVar("T")
Handler = Callable[[Any, Request], Awaitable[Response]]

_CSS = """body{font:15px/1.45 Arial,Helvetica,sans-serif;margin:0;color:#222;background:#fafafa}
header{background:var(--brand);color:#fff;padding:10px 24px;display:flex;gap:24px;align-items:center}
header a{color:#fff;text-decoration:none;font-weight:bold} header .logo{font-size:22px}
main{max-width:1100px;margin:0 auto;padding:16px 24px}
form.search{display:flex;gap:8px;margin:8px 0 16px} form.search input{flex:1;padding:8px;font-size:15px}
button,.btn{background:var(--brand);color:#fff;border:0;padding:8px 14px;font-size:15px;cursor:pointer;
border-radius:4px;text-decoration:none;display:inline-block}
.card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:10px 14px;margin:0 0 10px}
.card h3{margin:0 0 4px;font-size:17px} .muted{color:#666;font-size:13px} .filters a{margin-right:12px}
table{border-collapse:collapse;background:#fff} td,th{border:1px solid #ddd;padding:6px 10px;text-align:left}
.notice{background:#e8f5e9;border:1px solid #a5d6a7;padding:8px 12px;margin:8px 0}
input[type=text],input[type=email],input[type=number]{padding:6px;font-size:15px}"""


def esc(value: Any) -> str:
    return html.escape(str(value))


def route(path: str, method: str = "GET") -> Callable[[Handler], Handler]:
    """Serve the decorated method at `path` (stack them for several paths); `Site.routes` collects them."""

    def mark(handler: Handler) -> Handler:
        handler.site_routes = [*getattr(handler, "site_routes", []), (path, method)]  # type: ignore[attr-defined]
        return handler

    return mark


class NotFound(Exception):
    """What a page's path names does not exist: the site answers with its "Not found" page (404)."""


def numbered(items: Sequence[T], number: int, what: str) -> T:
    """The `number`-th item (from 1, as the sites' paths count), else `NotFound`."""
    if not 1 <= number <= len(items):
        raise NotFound(f"no {what} {number}")
    return items[number - 1]


class Site:
    """A weblab site: name, public hostname, brand colour, pages (`@route`); state per world id."""

    name: ClassVar[str]
    title: ClassVar[str]
    #: The hostname the site is served under in the browser (mapped onto its local port).
    host: ClassVar[str]
    brand: ClassVar[str] = "#1565c0"
    nav: ClassVar[tuple[tuple[str, str], ...]] = ()
    #: Real hostnames this site stands in for when a live-web benchmark runs on local clones.
    clones: ClassVar[tuple[str, ...]] = ()
    #: A new world's state (the sites' data is fixed; state is what episodes change).
    initial: ClassVar[dict[str, Any]] = {}

    def __init__(self) -> None:
        self._worlds: dict[str, dict[str, Any]] = defaultdict(self.initial_state)

    @property
    def url(self) -> str:
        return f"https://{self.host}/"

    def initial_state(self) -> dict[str, Any]:
        return copy.deepcopy(self.initial)

    def state(self, request: Request) -> dict[str, Any]:
        return self._worlds[request.headers.get(WORLD_HEADER, DEFAULT_WORLD)]

    def remember(self, request: Request, key: str, item: Any) -> list[Any]:
        """Add `item` once to the world's list `key` (saved recipes, a watchlist); returns the list."""
        items: list[Any] = self.state(request)[key]
        if item not in items:
            items.append(item)
        return items

    def routes(self) -> list[BaseRoute]:
        """The site's pages and forms: its `@route` methods, in the order the class defines them."""
        return [
            Route(path, getattr(self, name), methods=[method])
            for name, handler in vars(type(self)).items()
            for path, method in getattr(handler, "site_routes", [])
        ]

    def page(self, title: str, body: str, status: int = 200) -> HTMLResponse:
        links = "".join(f'<a href="{href}">{esc(label)}</a>' for label, href in self.nav)
        doc = (
            f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{esc(title)} - {esc(self.title)}"
            f"</title><style>:root{{--brand:{self.brand}}}{_CSS}</style></head><body><header>"
            f'<a class=logo href="/">{esc(self.title)}</a>{links}</header><main>{body}</main></body></html>'
        )
        return HTMLResponse(doc, status_code=status)

    def not_found(self, what: str) -> HTMLResponse:
        return self.page("Not found", f"<h1>Not found</h1><p>{esc(what)}</p>", status=404)

    def app(self) -> Starlette:
        async def state(request: Request) -> Response:
            return JSONResponse(self.state(request))

        async def not_found(request: Request, error: Exception) -> Response:
            return self.not_found(str(error))

        return Starlette(
            routes=[Route("/__state", state), *self.routes()], exception_handlers={NotFound: not_found}
        )


def redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


def post_button(button_id: str, label: str, url: str, note_id: str, done: str) -> str:
    """A button that POSTs to `url` without leaving the page and says `done` (or "Error") in a note beside
    it, as sites' "Save" and "Add to list" buttons do."""
    return (
        f"<button id={button_id}>{esc(label)}</button> <span id={note_id}></span><script>"
        f"document.getElementById('{button_id}').onclick = async () => {{ const r = await fetch("
        f"'{url}', {{method: 'POST'}}); document.getElementById('{note_id}').textContent = "
        f"r.ok ? '{done}' : 'Error'; }};</script>"
    )


def search_form(action: str, query: str = "", placeholder: str = "Search", name: str = "q") -> str:
    return (
        f'<form class=search action="{action}" method=get><input type=text name={name} '
        f'value="{esc(query)}" placeholder="{esc(placeholder)}" aria-label="{esc(placeholder)}">'
        "<button type=submit>Search</button></form>"
    )
