"""The next sample's desktop, started while the current sample's agent works.

Samples of a process take turns on the desktop (`DesktopTurns`: one desktop at a time, since a desktop
and its apps take most of a small machine's CPU). Starting a desktop (its sandbox, session, in-desktop
server and channels) takes seconds, which every sample would pay on its critical path. So, once the
current sample's desktop is ready and another sample is waiting for its turn, a bare desktop of the same
provider is started in a thread; the next sample provisions its apps and runs its task's setup on it.
The spare is a fresh desktop no task has touched (never one a task ran on), and it is stopped when no
sample is left waiting, so nothing outlives the samples that could use it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass

import anyio

from forge_eval.benchmarks.osworld._desktop import LocalDesktop
from forge_eval.benchmarks.osworld._providers import Provider

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DesktopStart:
    """How a sample's desktop was started: `prestarted` by the previous sample's turn, else on the
    sample's own critical path; `seconds` it waited for the rest of a spare's start (0 when it starts its
    own: that start is part of its setup)."""

    prestarted: bool
    seconds: float

    def to_dict(self) -> dict[str, object]:
        return {"prestarted": self.prestarted, "seconds": round(self.seconds, 2)}


class DesktopTurns:
    """One sample's desktop at a time, with the next one started ahead (see the module doc)."""

    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self._waiting = 0
        self._spare: tuple[tuple[str, str], Future[LocalDesktop]] | None = None
        self._threads = ThreadPoolExecutor(max_workers=1, thread_name_prefix="osworld-spare-desktop")

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """Hold the desktop turn; when it ends with nobody waiting, the spare (if any) is stopped."""
        self._waiting += 1
        try:
            await self._lock.acquire()
        finally:
            self._waiting -= 1
        try:
            yield
        finally:
            try:
                if not self._waiting:
                    with anyio.CancelScope(shield=True):
                        await self.discard()
            finally:
                self._lock.release()

    async def take(self, provider: Provider) -> tuple[LocalDesktop | None, DesktopStart]:
        """The spare desktop when one of `provider`'s kind was started ahead (waiting for the rest of its
        start), else None: the caller starts its own."""
        began = time.monotonic()
        spare, self._spare = self._spare, None
        if spare is None:
            return None, DesktopStart(False, 0.0)
        key, started = spare
        if key != _key(provider):
            await _stop(started)
            return None, DesktopStart(False, 0.0)
        try:
            desktop = await asyncio.wrap_future(started)
        except asyncio.CancelledError:  # the sample was stopped while the spare still started
            started.add_done_callback(_stop_started)
            raise
        except Exception as e:  # the sample starts its own, which reports what fails
            logger.warning("the spare OSWorld desktop did not start (%s); starting one now", e)
            return None, DesktopStart(False, 0.0)
        return desktop, DesktopStart(True, time.monotonic() - began)

    def prestart(self, provider: Provider) -> None:
        """Start a bare desktop of `provider` in a thread when a sample waits for its turn and the provider
        can start one apart from its apps (`Provider.bare_desktop`)."""
        if self._waiting and self._spare is None and provider.prestarts:
            self._spare = (_key(provider), self._threads.submit(provider.bare_desktop))

    async def discard(self) -> None:
        """Stop the spare desktop, if any (its start is awaited first)."""
        spare, self._spare = self._spare, None
        if spare is not None:
            await _stop(spare[1])


def _key(provider: Provider) -> tuple[str, str]:
    """What makes desktops interchangeable: the provider and the OSWorld tree its server comes from."""
    return provider.name, str(getattr(provider, "tree", None))


async def _stop(started: Future[LocalDesktop]) -> None:
    with anyio.CancelScope(shield=True), suppress(Exception):  # a failed start stopped what it started
        desktop = await asyncio.wrap_future(started)
        await anyio.to_thread.run_sync(desktop.stop)


def _stop_started(started: Future[LocalDesktop]) -> None:
    """Stop the desktop once its start ends (in the thread that started it)."""
    if not started.cancelled() and started.exception() is None:
        started.result().stop()
