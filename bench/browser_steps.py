"""Browser environment throughput: env steps/s and per-step latency at 1, 2 and 4 parallel episodes.

One step = a MolmoWeb action (scroll or click) + settle + PNG screenshot + ARIA snapshot, the cost the
molmoweb harness pays per model call. Episodes share one browser (one context each) on the weblab shop
site, as in a run. Printed side by side from one process so the ratios are comparable on a loaded box.

    .venv/bin/python bench/browser_steps.py [--seconds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from forge_eval.benchmarks.web import BrowserConfig, BrowserSession, WebEnv
from forge_eval.benchmarks.weblab import SITES, host_map, sites


async def _episode(config: BrowserConfig, deadline: float, latencies: list[float], world: str) -> int:
    steps = 0
    async with WebEnv(config, world=world) as env:
        await env.start(SITES.get("shop").url)
        actions = [
            {"name": "scroll", "delta_y": 400},
            {"name": "scroll", "delta_y": -400},
            {"name": "mouse_click", "x": 640, "y": 40},
            {"name": "keyboard_type", "text": "mouse"},
        ]
        while time.perf_counter() < deadline:
            start = time.perf_counter()
            await env.step(actions[steps % len(actions)])
            latencies.append(time.perf_counter() - start)
            steps += 1
    return steps


async def _measure(config: BrowserConfig, parallel: int, seconds: float) -> tuple[float, float, float]:
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds
    start = time.perf_counter()
    counts = await asyncio.gather(
        *(_episode(config, deadline, latencies, f"b{parallel}-{i}") for i in range(parallel))
    )
    elapsed = time.perf_counter() - start
    latencies.sort()
    p90 = latencies[int(0.9 * (len(latencies) - 1))]
    return sum(counts) / elapsed, statistics.median(latencies) * 1000, p90 * 1000


async def main(seconds: float) -> None:
    config = BrowserConfig(host_map=host_map(sites()))
    warm = WebEnv(config)  # keeps the browser session up between the measurements
    await warm.start()
    print(f"{'episodes':>8} {'steps/s':>8} {'ratio':>6} {'median ms':>10} {'p90 ms':>8}")
    base = None
    for parallel in (1, 2, 4):
        rate, median, p90 = await _measure(config, parallel, seconds)
        base = base or rate
        print(f"{parallel:>8} {rate:>8.2f} {rate / base:>6.2f} {median:>10.0f} {p90:>8.0f}")
    await warm.close()
    await BrowserSession.close_all()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="measuring time per parallelism level")
    asyncio.run(main(parser.parse_args().seconds))
