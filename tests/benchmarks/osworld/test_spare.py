"""`DesktopTurns`: one desktop at a time per process, the next one started ahead only for a sample that is
waiting for its turn, and no spare left once nobody waits. A recording provider stands in for the desktop
(its start and stop are what is counted); the real desktop's prestart is run by test_run.py."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

from forge_eval.benchmarks.osworld._providers import LocalProvider
from forge_eval.benchmarks.osworld._spare import DesktopTurns


class _Desktop:
    def __init__(self, log: list[str], n: int) -> None:
        self.log, self.n = log, n

    def stop(self) -> None:
        self.log.append(f"stop {self.n}")


class _Provider(LocalProvider):
    """Bare desktops that take `seconds` to start, each numbered, every start and stop logged."""

    def __init__(self, tree: Path | None = None, seconds: float = 0.2, fail: bool = False) -> None:
        super().__init__(tree)
        self.seconds, self.fail, self.log = seconds, fail, []
        self._lock = threading.Lock()

    def bare_desktop(self) -> _Desktop:  # type: ignore[override]
        time.sleep(self.seconds)
        if self.fail:
            raise RuntimeError("no display")
        with self._lock:
            n = sum(line.startswith("start") for line in self.log) + 1
            self.log.append(f"start {n}")
        return _Desktop(self.log, n)


async def _sample(turns: DesktopTurns, provider: _Provider, seen: list[tuple[str, bool]], name: str) -> None:
    async with turns.turn():
        desktop, started = await turns.take(provider)
        seen.append((name, started.prestarted))
        await asyncio.sleep(0.05)  # the task's setup and ready wait
        turns.prestart(provider)
        await asyncio.sleep(0.5)  # the agent's turn, long enough for the spare to start
        if desktop is not None:
            desktop.stop()


def test_a_waiting_sample_gets_a_desktop_started_ahead_and_none_is_left() -> None:
    turns, provider, seen = DesktopTurns(), _Provider(), []

    async def main() -> None:
        await asyncio.gather(*(_sample(turns, provider, seen, f"s{i}") for i in range(3)))

    asyncio.run(main())
    # the first sample starts its own; each later one takes the desktop started during the one before
    assert seen == [("s0", False), ("s1", True), ("s2", True)]
    # two spares started (for s1 and s2), none for the last sample (nobody was waiting), each stopped once
    assert provider.log == ["start 1", "start 2", "stop 1", "stop 2"]


def test_a_lone_sample_starts_no_spare() -> None:
    turns, provider, seen = DesktopTurns(), _Provider(), []
    asyncio.run(_sample(turns, provider, seen, "only"))
    assert seen == [("only", False)] and provider.log == []


def test_a_spare_nobody_takes_is_stopped_when_the_turns_end() -> None:
    """A waiting sample cancelled after the spare was started: the spare is stopped at the turn's end."""
    turns, provider = DesktopTurns(), _Provider()

    async def main() -> None:
        first = asyncio.create_task(_sample(turns, provider, [], "first"))
        await asyncio.sleep(0)
        waiter = asyncio.create_task(_sample(turns, provider, [], "waiter"))
        await asyncio.sleep(0.2)  # the first sample has prestarted for the waiter
        waiter.cancel()
        await first

    asyncio.run(main())
    assert provider.log == ["start 1", "stop 1"]


def test_a_spare_of_another_provider_or_tree_is_stopped_not_used(tmp_path: Path) -> None:
    turns, provider, other = DesktopTurns(), _Provider(tmp_path / "a"), _Provider(tmp_path / "b")

    async def main() -> None:
        async with turns.turn():
            turns._waiting += 1  # as if a sample waited for the turn
            turns.prestart(provider)
            turns._waiting -= 1
            desktop, started = await turns.take(other)
        assert desktop is None and not started.prestarted

    asyncio.run(main())
    assert provider.log == ["start 1", "stop 1"]


def test_a_spare_that_fails_to_start_leaves_the_sample_to_start_its_own(
    caplog: pytest.LogCaptureFixture,
) -> None:
    turns, provider = DesktopTurns(), _Provider(fail=True)

    async def main() -> None:
        async with turns.turn():
            turns._waiting += 1
            turns.prestart(provider)
            turns._waiting -= 1
            desktop, started = await turns.take(provider)
        assert desktop is None and not started.prestarted

    asyncio.run(main())
    assert "did not start (no display)" in caplog.text


def test_a_sample_stopped_while_its_spare_starts_leaves_no_desktop() -> None:
    turns, provider = DesktopTurns(), _Provider(seconds=0.5)

    async def main() -> None:
        turns._waiting += 1
        turns.prestart(provider)
        turns._waiting -= 1
        taking = asyncio.create_task(turns.take(provider))
        await asyncio.sleep(0.1)  # the spare is still starting
        taking.cancel()
        with pytest.raises(asyncio.CancelledError):
            await taking

    asyncio.run(main())
    turns._threads.shutdown(wait=True)  # the start, then its stop, run on the turns' thread
    assert provider.log == ["start 1", "stop 1"]
