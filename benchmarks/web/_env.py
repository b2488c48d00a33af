"""`WebEnv`: one browser episode (one Playwright context) with MolmoWeb actions, settling and recording.

Episodes on one event loop share a browser (`BrowserSession`): a context costs ~23 MB and ~100 ms, a
browser launch more, and Playwright objects are bound to the loop that created them (Inspect makes a new
loop per `eval()`), so the session is keyed by loop and closed a few seconds after its last episode
ends (`LINGER_S`: sequential samples then reuse it instead of restarting the driver, 0.5-4 s each).
The browser runs unprivileged with Chromium's own sandbox on, offline inside the project's sandbox too
(`_launch.py`); it, its sandbox and its files end with the session.

Every request of an episode passes its `NetworkPolicy` (`_policy.py`): the context's router serves the
benchmark's own sites itself (following their redirects hop by hop, each hop checked) and aborts what
the policy refuses; online, Chromium's own connections (redirects it follows, after DNS) go through the
episode's egress gate (`_egress.py`). A refused navigation is the step's error, and the episode goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urljoin

from forge_eval._errors import ForgeError
from forge_eval.benchmarks.services import WORLD_HEADER
from forge_eval.benchmarks.web._actions import Action, ActionError, parse_action
from forge_eval.benchmarks.web._config import BrowserConfig, find_executable, require_playwright
from forge_eval.benchmarks.web._egress import EgressGate
from forge_eval.benchmarks.web._launch import (
    SANDBOX_FAILURES,
    SANDBOX_HINT,
    BrowserLaunch,
    chromium_sandbox,
    prepare_launch,
)
from forge_eval.benchmarks.web._policy import NetworkPolicy, Refused, origin
from forge_eval.benchmarks.web._trajectory import Observation, Step, Trajectory
from forge_eval.harnesses.molmoweb import EXIT_TAG

if TYPE_CHECKING:
    from playwright.async_api import (
        APIResponse,
        Browser,
        BrowserContext,
        ConsoleMessage,
        Page,
        Playwright,
        Request,
        Route,
    )

log = logging.getLogger(__name__)


LINGER_S = 5.0
#: Redirect hops the router follows for the benchmark's own sites (Chromium's own limit).
MAX_REDIRECTS = 20
#: Refusals one step's error lists (a page can make many requests; the first few say enough).
SHOWN_REFUSALS = 3
#: What marks an answer among the messages to the user (MolmoWeb's runner prefers it to a plain message).
ANSWER_TAG = "[ANSWER]"

_REDIRECT_STATUSES = (301, 302, 303, 307, 308)
_BODY_HEADERS = ("content-type", "content-length")

_TWO_FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"
_SAME_DOCUMENT = "() => history.replaceState(history.state, '', location.href)"
# How Chromium's console reports a URL it would not let a page open (file:, chrome:, view-source:, a
# top-level data: or filesystem: URL); the URL follows the first ": ".
_CHROMIUM_REFUSALS = ("Not allowed to load local resource: ", "Not allowed to navigate top frame to ")
# Errors of a page whose document is being replaced (the last: a screenshot taken while an aborted
# navigation commits Chromium's error page); the observation waits and retries.
_NAVIGATION_RACE = (
    "Execution context was destroyed",
    "navigation",
    "Cannot find context",
    "Unable to capture screenshot",
)

# Visible interactive elements, numbered in document order, with their centre in viewport pixels.
_ELEMENTS_JS = """() => {
  const sel = 'a[href], button, input, select, textarea, [role=button], [role=link], [role=tab],'
    + ' [role=checkbox], [onclick], summary';
  const out = [];
  for (const el of document.querySelectorAll(sel)) {
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1 || r.bottom < 0 || r.right < 0
        || r.top > innerHeight || r.left > innerWidth) continue;
    const st = getComputedStyle(el);
    if (st.visibility === 'hidden' || st.display === 'none') continue;
    const name = (el.getAttribute('aria-label') || el.innerText || el.value || el.placeholder
      || el.title || el.name || '').trim().replace(/\\s+/g, ' ').slice(0, 60);
    const role = el.getAttribute('role') || (el.tagName === 'INPUT' ? 'input:' + el.type
      : el.tagName.toLowerCase());
    out.push({id: out.length, role, name, x: Math.round(r.left + r.width / 2),
              y: Math.round(r.top + r.height / 2)});
  }
  return out;
}"""


class RefusedRedirect(Refused):
    """A redirect of the benchmark's own site that the policy refuses (the message names both URLs)."""


class BrowserCrashedError(ForgeError):
    """The browser or the page's renderer died: the episode cannot continue (the sample is an error)."""


class BrowserSession:
    """A Playwright driver and one launched browser, shared by the episodes of one event loop."""

    _sessions: ClassVar[dict[tuple[int, str | None, tuple[str, ...], bool], BrowserSession]] = {}

    def __init__(self, key: tuple[int, str | None, tuple[str, ...], bool]) -> None:
        self._key = key
        self.playwright: Playwright | None = None
        self.browser: Browser | None = None
        #: Who the browser runs as and its private folder (`_launch.py`), undone after it closed.
        self.launch: BrowserLaunch | None = None
        self.users = 0
        self._lock = asyncio.Lock()
        self._closer: asyncio.Task[None] | None = None

    @classmethod
    async def acquire(cls, config: BrowserConfig) -> BrowserSession:
        require_playwright()
        executable = find_executable(config)
        key = (id(asyncio.get_running_loop()), executable, tuple(config.launch_args()), chromium_sandbox())
        session = cls._sessions.get(key)
        if session is None or (session.browser is not None and not session.browser.is_connected()):
            session = cls._sessions[key] = BrowserSession(key)
        session.users += 1
        if session._closer is not None:
            session._closer.cancel()
            session._closer = None
        try:
            await session._start(executable, config)
        except BaseException:
            await session.release()
            raise
        return session

    async def _start(self, executable: str | None, config: BrowserConfig) -> None:
        from playwright.async_api import Error, async_playwright  # optional: the `web` extra

        async with self._lock:
            if self.browser is not None:
                return
            self.playwright = await async_playwright().start()
            try:
                self.launch = await prepare_launch(
                    executable, self.playwright.chromium.executable_path, config.offline
                )
                self.browser = await self.playwright.chromium.launch(
                    headless=True, args=config.launch_args(), **self.launch.options()
                )
            except BaseException as e:
                await self.playwright.stop()
                self.playwright = None
                await self._end_launch()
                if not isinstance(e, Error):
                    raise
                sandbox = any(failure in e.message for failure in SANDBOX_FAILURES)
                raise BrowserCrashedError(
                    f"cannot launch the browser {executable or '(Playwright-managed)'}: {e.message}",
                    hint=SANDBOX_HINT
                    if sandbox
                    else "check the binary runs (`chromium-headless-shell --version`) or set $FORGE_BROWSER",
                ) from None

    async def release(self) -> None:
        """Leave the session; `LINGER_S` after the last episode left, the browser and driver close."""
        self.users -= 1
        if self.users > 0:
            return
        if self.browser is None or not self.browser.is_connected():
            await self.close()
            return
        self._closer = asyncio.get_running_loop().create_task(self._linger())
        await asyncio.sleep(0)  # let it start: a task cancelled before its first step never runs its finally

    async def _linger(self) -> None:
        """Close the unused session after `LINGER_S`, or when the loop ends first: `asyncio.run` cancels
        the tasks left and waits for them, so the browser's sandbox, uid and files never outlive it."""
        try:
            await asyncio.sleep(LINGER_S)
        finally:
            if self.users == 0 and self._closer is asyncio.current_task():
                self._closer = None
                await self.close()

    @classmethod
    async def close_all(cls) -> None:
        """Close every session of the running loop now (call before the loop ends)."""
        loop_id = id(asyncio.get_running_loop())
        for key, session in list(cls._sessions.items()):
            if key[0] == loop_id:
                await session.close()

    async def close(self) -> None:
        """Close the browser and the driver (a crashed browser is just forgotten)."""
        if self._closer is not None:
            self._closer.cancel()
            self._closer = None
        if self._sessions.get(self._key) is self:
            del self._sessions[self._key]
        async with self._lock:
            try:
                for closer in (self.browser, self.playwright):
                    if closer is None:
                        continue
                    try:
                        await (closer.close() if closer is self.browser else closer.stop())  # type: ignore[union-attr]
                    except Exception as e:  # a crashed browser cannot be closed cleanly; nothing is lost
                        log.debug("closing the browser session: %s", e)
            finally:  # also when the loop's shutdown cancels the close: the sandbox ends its processes
                self.browser = self.playwright = None
                await self._end_launch()

    async def _end_launch(self) -> None:
        """End the browser's sandbox, free its uid and remove its files (once the browser has exited)."""
        launch, self.launch = self.launch, None
        if launch is not None:
            await launch.close()


class WebEnv:
    """One browser episode: its own context (cookies, storage, tabs), actions, observations, trajectory.

    Args:
        config: Browser settings (viewport, locale, network policy).
        world: Id sent to the local sites in `X-Forge-World`, so concurrent episodes get separate state.
        aria: Include the ARIA snapshot in observations (and the trajectory).
        elements: Include the numbered list of visible interactive elements in observations.
        max_steps: Step cap of the episode (the protocol's `max_steps`); None = no cap.

    `end_on_exit` (set by the harness): as in MolmoWeb's runner, only a message to the user that starts
    with `[EXIT]` ends the episode (or the cap); answers and infeasibility reports are steps like others.
    """

    def __init__(
        self,
        config: BrowserConfig | None = None,
        world: str | None = None,
        aria: bool = True,
        elements: bool = False,
        max_steps: int | None = None,
    ) -> None:
        self.config = config or BrowserConfig()
        self.policy = NetworkPolicy(self.config)
        self.max_steps = max_steps
        self.world = world
        self.aria = aria
        self.elements = elements
        self.end_on_exit = False
        self.trajectory = Trajectory(task="", start_url="")
        self.done = False
        self._session: BrowserSession | None = None
        self._context: BrowserContext | None = None
        self._pages: list[Page] = []
        self._active = 0
        self._crash: str | None = None
        self._on_disconnect: Any = None
        self._gate: EgressGate | None = None
        self._stuck: set[Page] = set()
        #: Navigations refused so far, one sentence each (a step's error lists those it caused).
        self.refusals: list[str] = []

    # ----- lifecycle -------------------------------------------------------------------------------

    async def start(self, start_url: str = "about:blank", task: str = "") -> Observation:
        """Open the episode's context at `start_url` and return the first observation."""
        await self._open_context()
        assert self._context is not None
        async with self._guard():
            self._context.set_default_timeout(self.config.step_timeout_s * 1000)
            self._context.on("page", self._on_page)
            self._context.on("requestfailed", self._on_request_failed)
            await self._context.route("**/*", self._route)
            page = await self._context.new_page()
            self._active = self._pages.index(page)
        self.trajectory = Trajectory(task=task, start_url=start_url)
        if start_url != "about:blank":
            try:
                await self.goto(start_url)
            except ActionError as e:
                raise ForgeError(f"the start page {start_url} did not load: {e}") from None
        obs = await self.observe()
        start = {"name": "start", "url": start_url}
        self.trajectory.initial = Step(start, obs.url, obs.title, obs.screenshot, obs.aria)
        return obs

    async def _open_context(self) -> None:
        """Acquire the shared browser and open this episode's context in it.

        A browser that died while no episode used it (killed between two runs on one loop) still looks
        connected until the loop reads its close event, so the first failure there relaunches once
        instead of failing an episode that never touched the dead browser.
        """
        from playwright.async_api import Error  # optional: the `web` extra

        headers = {WORLD_HEADER: self.world} if self.world else None
        proxy = None
        if not self.config.offline:
            self._gate = EgressGate(self.policy, self.config.step_timeout_s)
            proxy = {"server": await self._gate.start()}
        for attempt in (1, 2):
            self._session = await BrowserSession.acquire(self.config)
            browser = self._session.browser
            assert browser is not None
            try:
                self._context = await browser.new_context(
                    viewport={"width": self.config.width, "height": self.config.height},
                    locale=self.config.locale,
                    timezone_id=self.config.timezone,
                    extra_http_headers=headers,
                    proxy=proxy,  # type: ignore[arg-type]  # ProxySettings is a TypedDict
                )
            except Error as e:
                await self._session.release()
                self._session = None
                if browser.is_connected():
                    raise
                if attempt == 2:
                    raise BrowserCrashedError(f"browser crashed: {e.message.splitlines()[0]}") from None
                log.info("the shared browser had exited while idle; launching a fresh one")
                continue
            self._on_disconnect = lambda _: self._crashed("the browser process exited")
            browser.on("disconnected", self._on_disconnect)
            return

    async def close(self) -> None:
        if self._context is not None:
            try:
                await self._context.close()
            except Exception as e:  # already gone with a crashed browser
                log.debug("closing the episode context: %s", e)
            self._context = None
        if self._session is not None:
            if self._session.browser is not None:
                self._session.browser.remove_listener("disconnected", self._on_disconnect)
            await self._session.release()
            self._session = None
        if self._gate is not None:
            await self._gate.close()
            self._gate = None

    async def __aenter__(self) -> WebEnv:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ----- tabs and navigation ---------------------------------------------------------------------

    @property
    def page(self) -> Page:
        if not self._pages:
            reason = self._crash or "the browser closed every tab"
            raise BrowserCrashedError(f"browser crashed: {reason}")
        return self._pages[self._active]

    def _on_page(self, page: Page) -> None:
        # A tab opened by the page (target=_blank, window.open) becomes the active one, as in a browser.
        self._pages.append(page)
        self._active = len(self._pages) - 1
        page.on("close", self._on_close)
        page.on("crash", lambda _: self._crashed("the page's renderer crashed"))
        page.on("console", self._on_console)

    def _on_close(self, page: Page) -> None:
        if page in self._pages:
            index = self._pages.index(page)
            self._pages.remove(page)
            if self._active >= index and self._active > 0:
                self._active -= 1

    def _crashed(self, reason: str) -> None:
        self._crash = self._crash or reason

    async def goto(self, url: str) -> None:
        """Load `url` in the active tab; a URL the policy refuses is an `ActionError` saying why."""
        from playwright.async_api import Error  # optional: the `web` extra

        self._check(url)
        mark = len(self.refusals)
        try:
            await self.page.goto(url, wait_until="load")
        except Error as e:
            if self._crash:
                raise BrowserCrashedError(f"browser crashed: {self._crash}") from None
            reason = self.refused_since(mark) or e.message.splitlines()[0]
            raise ActionError(f"cannot load {url}: {reason}") from None

    def _check(self, url: str) -> None:
        """Refuse a URL the policy does not allow before any tab is touched."""
        try:
            self.policy.route(url)
        except Refused as e:
            raise ActionError(f"cannot load {url}: {e}") from None

    async def new_tab(self, url: str | None = None) -> None:
        assert self._context is not None
        if url:
            self._check(url)
        await self._context.new_page()
        if url:
            await self.goto(url)

    def focus_tab(self, index: int) -> None:
        if not 0 <= index < len(self._pages):
            raise ActionError(f"no tab {index}; open tabs are 0..{len(self._pages) - 1}")
        self._active = index

    async def close_tab(self) -> None:
        if len(self._pages) == 1:
            raise ActionError("cannot close the last tab")
        await self.page.close()

    # ----- the network policy ----------------------------------------------------------------------

    async def _route(self, route: Route, request: Request) -> None:
        """Every request Playwright routes: serve the benchmark's own sites, pass the live web on to
        Chromium (and its egress gate), abort what the policy refuses."""
        from playwright.async_api import Error  # optional: the `web` extra

        try:
            local = self.policy.route(request.url)
            if local is None:
                await route.continue_()
                return
            response = await self._fetch_local(route, request, local)
        except Refused as e:
            if request.is_navigation_request():
                self.refusals.append(str(e) if isinstance(e, RefusedRedirect) else f"{request.url}: {e}")
            await route.abort("blockedbyclient")
            return
        except Error as e:  # the local site is down, or the context closed while we fetched
            log.debug("routing %s: %s", request.url, e.message.splitlines()[0])
            with contextlib.suppress(Error):
                await route.abort("failed")
            return
        await route.fulfill(response=response)

    async def _fetch_local(self, route: Route, request: Request, local: str) -> APIResponse:
        """Fetch a request for the benchmark's own site from its local server, following redirects
        here with each hop checked (the fetch's own following would go wherever the site points, and a
        fulfilled 303 ends on Chromium's error page). As after any form post, the address bar keeps
        the post's URL while the page shows where it led."""
        url, method, body = request.url, request.method, None
        headers = None  # the request's own
        for _ in range(MAX_REDIRECTS + 1):
            response = await route.fetch(
                url=local, method=method, headers=headers, post_data=body, max_redirects=0
            )
            location = response.headers.get("location")
            if response.status not in _REDIRECT_STATUSES or not location:
                return response
            url = urljoin(url, location)
            try:
                next_local = self.policy.route(url)
            except Refused as e:
                raise RefusedRedirect(f"{request.url} redirected to {url}, which was refused: {e}") from None
            if next_local is None:
                raise RefusedRedirect(f"{request.url} redirected to {url}, off the benchmark's own sites")
            local = next_local
            if response.status == 303 or (response.status in (301, 302) and method == "POST"):
                method, body = "GET", b""
                headers = {k: v for k, v in request.headers.items() if k not in _BODY_HEADERS}
        raise RefusedRedirect(f"{request.url} redirected more than {MAX_REDIRECTS} times")

    def _on_request_failed(self, request: Request) -> None:
        """A connection the egress gate refused (a redirect Chromium followed, a name that resolves to a
        private address) fails in Chromium; the gate's reason becomes the navigation's refusal."""
        reason = self._gate.refusals.get(origin(request.url)) if self._gate is not None else None
        if reason is not None and request.is_navigation_request():
            self.refusals.append(f"{request.url}: {reason}")

    def _on_console(self, message: ConsoleMessage) -> None:
        """A URL Chromium itself refused to let the page open is a refusal too. After a form submitted
        to such a URL, Playwright waits for a navigation that never comes (every locator would time
        out), so the page is marked for `_release_stuck`."""
        if message.type == "error" and message.text.startswith(_CHROMIUM_REFUSALS):
            self.refusals.append(f"{message.text.split(': ', 1)[1]}: a web page may not open it")
            if message.page is not None:
                self._stuck.add(message.page)

    async def _release_stuck(self) -> None:
        """End the navigation Playwright still waits for on pages where Chromium refused one: a
        same-document navigation to the same URL (invisible to the page) settles it."""
        from playwright.async_api import Error  # optional: the `web` extra

        while self._stuck:
            page = self._stuck.pop()
            if not page.is_closed():
                with contextlib.suppress(Error):
                    await page.evaluate(_SAME_DOCUMENT)

    def refused_since(self, mark: int) -> str | None:
        """The refusals after the first `mark`, as one error message (None when there are none)."""
        new = list(dict.fromkeys(self.refusals[mark:]))
        if not new:
            return None
        more = f" (and {len(new) - SHOWN_REFUSALS} more)" if len(new) > SHOWN_REFUSALS else ""
        return "refused " + "; ".join(new[:SHOWN_REFUSALS]) + more

    # ----- steps ------------------------------------------------------------------------------------

    async def step(
        self,
        action: Action | dict[str, Any],
        thought: str | None = None,
        parts: Sequence[Action | dict[str, Any]] | None = None,
    ) -> Observation:
        """Perform `action`, let the page settle, observe, and record the step.

        `parts`: the browser actions that carry `action` out, performed in order as this one step (the
        first failure ends them); `action` is then only recorded. A failed action (a bad argument, a page
        that will not load) is recorded with its error and the episode goes on; a crashed browser raises
        `BrowserCrashedError`.
        """
        if self.done:
            reason = "the step limit was reached" if self.at_step_limit else "an answer or report was sent"
            raise ActionError(f"the episode has ended ({reason})")
        raw = [action] if parts is None else list(parts)
        try:
            parsed = [a if isinstance(a, Action) else parse_action(a) for a in raw]
        except ActionError as e:
            obs = await self.observe()
            recorded = action.to_dict() if isinstance(action, Action) else action
            self._record(recorded if isinstance(recorded, dict) else {"name": "?"}, obs, thought, str(e))
            self.done = self.at_step_limit
            return obs
        error = None
        mark = len(self.refusals)
        try:
            for part in parsed:
                async with self._guard():
                    await asyncio.wait_for(self._perform(part), self.config.step_timeout_s)
                self._note(part)
        except ActionError as e:
            error = str(e)
        except TimeoutError:
            error = f"the action did not finish within {self.config.step_timeout_s:.0f} s"
        obs = await self.observe()
        error = error or self.refused_since(mark)
        recorded = action.to_dict() if isinstance(action, Action) else dict(action)
        self._record(parsed[0].to_dict() if parts is None else recorded, obs, thought, error)
        self.done = any(self._ends(p) for p in parsed) or self.at_step_limit
        return obs

    def _note(self, action: Action) -> None:
        """Keep an answer or report for the judges (as MolmoWeb's runner reads them when `end_on_exit`:
        an `[ANSWER]` message is not replaced by a plain one, `[EXIT]` and reports are not answers)."""
        if action.name == "send_msg_to_user":
            msg, kept = action.args["msg"], self.trajectory.answer or ""
            replaces = not msg.startswith(EXIT_TAG) and (ANSWER_TAG in msg or ANSWER_TAG not in kept)
            if not self.end_on_exit or replaces:
                self.trajectory.answer = msg
        elif action.name == "report_infeasible" and not self.end_on_exit:
            self.trajectory.infeasible = action.args["reason"]

    def _ends(self, action: Action) -> bool:
        if self.end_on_exit:
            return action.name == "send_msg_to_user" and action.args["msg"].startswith(EXIT_TAG)
        return action.spec.terminal

    @property
    def at_step_limit(self) -> bool:
        return self.max_steps is not None and len(self.trajectory.steps) >= self.max_steps

    async def _perform(self, action: Action) -> None:
        await action.spec.run(self, action.args)
        if not action.spec.passive:
            await self.settle()

    def _record(
        self, action: dict[str, Any], obs: Observation, thought: str | None, error: str | None
    ) -> None:
        step = Step(action, obs.url, obs.title, obs.screenshot, obs.aria, thought, error)
        self.trajectory.steps.append(step)

    async def settle(self) -> None:
        """Wait out what an action started: a short pause, the load event, then two painted frames."""
        from playwright.async_api import Error  # optional: the `web` extra

        await asyncio.sleep(self.config.settle_ms / 1000)
        await self._release_stuck()
        for _ in range(3):
            try:
                # self.page is re-read each time: a tab the action opened becomes the active one.
                await self.page.wait_for_load_state("load")
                await self.page.evaluate(_TWO_FRAMES)
                return
            except Error as e:
                if self._crash or not any(m in e.message for m in _NAVIGATION_RACE):
                    raise
                await asyncio.sleep(self.config.settle_ms / 1000)

    async def observe(self) -> Observation:
        """Screenshot, URL, title, tabs (and ARIA / elements when enabled) of the active tab."""
        from playwright.async_api import Error  # optional: the `web` extra

        for attempt in range(3):
            try:
                async with self._guard():
                    return await self._observe()
            except Error as e:
                # A navigation the action started can replace the document under us; wait and retry.
                if attempt == 2 or not any(m in e.message for m in _NAVIGATION_RACE):
                    raise
                await self.settle()
        raise AssertionError("unreachable")

    async def _observe(self) -> Observation:
        page = self.page
        await self._release_stuck()
        screenshot = await page.screenshot(type="png")
        aria = await page.locator("body").aria_snapshot() if self.aria else None
        elements = await page.evaluate(_ELEMENTS_JS) if self.elements else None
        tabs = [
            {"index": i, "url": p.url, "title": await p.title(), "active": i == self._active}
            for i, p in enumerate(self._pages)
        ]
        if page is not self.page:  # a tab opened while we looked: observe the new active tab
            await self.settle()
            return await self._observe()
        return Observation(page.url, await page.title(), tabs, screenshot, aria, elements)

    @asynccontextmanager
    async def _guard(self) -> AsyncIterator[None]:
        """Turn Playwright errors after a crash into `BrowserCrashedError` (the sample ends as an error)."""
        from playwright.async_api import Error  # optional: the `web` extra

        if self._crash:
            raise BrowserCrashedError(f"browser crashed: {self._crash}")
        try:
            yield
        except Error as e:
            if self._crash or "closed" in e.message or "crash" in e.message.lower():
                reason = self._crash or e.message.splitlines()[0]
                raise BrowserCrashedError(f"browser crashed: {reason}") from None
            raise
