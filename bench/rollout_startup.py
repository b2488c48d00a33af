"""Rollout startup: sandbox start-to-first-model-call latency and rollouts/minute with 8 at a time.

A trivial harness (system python3: one chat call to its base URL, then exit) runs as `local`-backend
rollouts against the scripted OpenAI-compatible upstream, in bubblewrap sandboxes and, side by side in the
same run, unsandboxed (`no_sandbox=True`) as the baseline; the upstream stamps each rollout's first request.
A bare `/bin/true` sandbox start-to-exit against a plain subprocess isolates the sandbox's own cost.
Real harnesses (Codex, Claude Code, OpenClaw) add their own start-up on top: see reference/runtime.md §7.

    .venv/bin/python bench/rollout_startup.py [--rollouts 32] [--concurrency 8]
"""

import argparse
import asyncio
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from forge_eval.training.backends import LocalBackend, RolloutSpec, SandboxSpec, start_sandbox
from forge_eval.training.proxy import ScriptedUpstream, serve_in_thread

HARNESS = """
import json, os, urllib.request
body = json.dumps({"model": "policy", "messages": [{"role": "user", "content": "hi"}]}).encode()
request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", body, {
    "Content-Type": "application/json", "Authorization": "Bearer " + os.environ["OPENAI_API_KEY"],
    "X-Forge-Rollout": os.environ["FORGE_ROLLOUT_ID"]})
print(json.load(urllib.request.urlopen(request, timeout=30))["choices"][0]["message"]["content"])
"""


class FirstCall:
    """ASGI wrapper that stamps the first request of each rollout (header X-Forge-Rollout)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.first: dict[str, float] = {}

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            rollout = dict(scope["headers"]).get(b"x-forge-rollout")
            if rollout:
                self.first.setdefault(rollout.decode(), time.time())
        await self.app(scope, receive, send)


async def _one(backend: LocalBackend, spec: RolloutSpec, started: dict[str, float]) -> str:
    handle = await backend.start(spec)
    started[spec.rollout_id] = handle.ref.sandbox.started_at
    try:
        return (await backend.wait(handle, time.time() + spec.deadline_s)).status
    finally:
        await backend.stop(handle)


async def _batch(url: str, stamps: FirstCall, n: int, concurrency: int, sandboxed: bool) -> dict[str, Any]:
    def program(spec: RolloutSpec, work: Path) -> Any:
        from forge_eval.training.backends import RolloutCommand

        return RolloutCommand(argv=["/usr/bin/python3", "-c", HARNESS])

    backend = LocalBackend(program, max_concurrent=concurrency, no_sandbox=not sandboxed)
    tag = "sbx" if sandboxed else "host"
    specs = [RolloutSpec(f"{tag}-{i}", 0, "trivial", {}, url, "key", 60.0) for i in range(n)]
    started: dict[str, float] = {}
    t0 = time.monotonic()
    statuses = await asyncio.gather(*(_one(backend, s, started) for s in specs))
    wall = time.monotonic() - t0
    first = stamps.first
    latency = [first[s.rollout_id] - started[s.rollout_id] for s in specs if s.rollout_id in first]
    return {
        "ok": statuses.count("completed"),
        "wall": wall,
        "per_min": 60 * n / wall,
        "p50": statistics.median(latency),
        "p95": statistics.quantiles(latency, n=20)[18] if len(latency) >= 20 else max(latency),
    }


async def _bare(repeats: int) -> tuple[float, float]:
    work = Path(tempfile.mkdtemp(prefix="forge-bench-"))
    sandboxed, plain = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        await (await start_sandbox(SandboxSpec(argv=["/bin/true"], workdir=work))).wait()
        sandboxed.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        subprocess.run(["/bin/true"], check=True)
        plain.append(time.perf_counter() - t0)
    return statistics.median(sandboxed), statistics.median(plain)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=32)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--bare-repeats", type=int, default=10)
    args = parser.parse_args()

    stamps = FirstCall(ScriptedUpstream().app())
    with serve_in_thread(stamps) as upstream:
        sbx = asyncio.run(_batch(upstream.url, stamps, args.rollouts, args.concurrency, sandboxed=True))
        host = asyncio.run(_batch(upstream.url, stamps, args.rollouts, args.concurrency, sandboxed=False))
    bare_sbx, bare_plain = asyncio.run(_bare(args.bare_repeats))

    print(f"trivial harness, {args.rollouts} rollouts, {args.concurrency} at a time (local backend)")
    print(f"{'':22}{'ok':>5}{'wall s':>9}{'rollouts/min':>14}{'first call p50 s':>18}{'p95 s':>8}")
    for name, r in (("bubblewrap sandbox", sbx), ("no sandbox (baseline)", host)):
        row = f"{r['ok']:>5}{r['wall']:>9.2f}{r['per_min']:>14.0f}{r['p50']:>18.3f}{r['p95']:>8.3f}"
        print(f"{name:22}{row}")
    print(f"sandbox / baseline: throughput x{sbx['per_min'] / host['per_min']:.2f}, "
          f"first-call latency p50 x{sbx['p50'] / host['p50']:.2f}")
    print(
        f"bare start-to-exit of /bin/true (median of {args.bare_repeats}): sandbox {bare_sbx * 1000:.0f} ms, "
        f"plain subprocess {bare_plain * 1000:.1f} ms (x{bare_sbx / bare_plain:.0f})"
    )


if __name__ == "__main__":
    main()
