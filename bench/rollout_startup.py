"""Rollout startup: sandbox start-to-first-model-call latency and rollouts/minute with 8 at a time.

Per real harness (`--harnesses codex,claude-code[,openclaw]`): forgelab training rollouts as the trainer
runs them (`LocalBackend`, the harness's `rollout_command`: task world, tool bridge, its launch) talking to
the real recording proxy over the scripted upstream; "setup" is start() up to the sandbox's start, and the
proxy's data plane stamps the first call of each rollout (path /r/<rollout>/...).
A trivial harness (system python3: one chat call to its base URL, then exit) runs as `local`-backend
rollouts against the scripted OpenAI-compatible upstream, in bubblewrap sandboxes and, side by side in the
same run, unsandboxed (`no_sandbox=True`) as the baseline; the upstream stamps each rollout's first request.
A bare `/bin/true` sandbox start-to-exit against a plain subprocess isolates the sandbox's own cost.

    .venv/bin/python bench/rollout_startup.py [--rollouts 32] [--concurrency 8] \\
        [--harnesses codex,claude-code]
"""

import argparse
import asyncio
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from forge_eval.proxy import ScriptedUpstream, serve_in_thread
from forge_eval.sandbox import RolloutSpec, SandboxSpec, start_sandbox
from forge_eval.training.backends import LocalBackend

HARNESS = """
import json, os, urllib.request
body = json.dumps({"model": "policy", "messages": [{"role": "user", "content": "hi"}]}).encode()
request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", body, {
    "Content-Type": "application/json", "Authorization": "Bearer " + os.environ["OPENAI_API_KEY"],
    "X-Forge-Rollout": os.environ["FORGE_ROLLOUT_ID"]})
print(json.load(urllib.request.urlopen(request, timeout=30))["choices"][0]["message"]["content"])
"""


class FirstCall:
    """ASGI wrapper that stamps the first request of each rollout (header X-Forge-Rollout, or the proxy's
    rollout path /r/<rollout>/<attempt>/...)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.first: dict[str, float] = {}

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            rollout = dict(scope["headers"]).get(b"x-forge-rollout", b"").decode()
            parts = scope["path"].split("/")
            if not rollout and len(parts) > 2 and parts[1] == "r":
                rollout = parts[2]
            if rollout:
                self.first.setdefault(rollout, time.time())
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
        from forge_eval.sandbox import RolloutCommand

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


async def _harness_runs(name: str, repeats: int) -> dict[str, Any]:
    """`repeats` training rollouts of harness `name` on forgelab's contacts-phone task: `LocalBackend` with
    the harness's own `rollout_command` (world, tool bridge, launch), through the real proxy."""
    from forge_eval.harnesses import HARNESSES
    from forge_eval.proxy import HttpProxyControl, ProxyConfig, ServerThread, create_app, create_control_app

    await asyncio.to_thread(HARNESSES.get(name).install)
    latency, wall, setup, ok = [], [], [], 0
    with serve_in_thread(ScriptedUpstream().app()) as upstream, tempfile.TemporaryDirectory() as tmp:
        config = ProxyConfig(records_dir=Path(tmp) / "records", secret="bench", upstreams=[upstream.url])
        app = create_app(config)
        stamps = FirstCall(app)
        server = ServerThread(stamps, control=create_control_app(app)).start()
        control = HttpProxyControl(str(server.control_url), str(config.admin_key))
        backend = LocalBackend(root_dir=Path(tmp) / "rollouts")
        task = {"benchmark": "forgelab", "task_id": "contacts-phone", "harness": name}
        try:
            for i in range(repeats):
                created = await control.create_rollout({"rollout_id": f"{name}-{i}", "harness": name})
                url = server.url + created.base_path
                spec = RolloutSpec(f"{name}-{i}", 0, name, task, url, created.api_key, 300.0)
                t0 = time.time()
                handle = await backend.start(spec)
                started = handle.ref.sandbox.started_at
                setup.append(started - t0)
                try:
                    outcome = await backend.wait(handle, time.time() + spec.deadline_s)
                finally:
                    await backend.stop(handle)
                ok += outcome.status == "completed"
                wall.append(time.time() - started)
                if f"{name}-{i}" in stamps.first:
                    latency.append(stamps.first[f"{name}-{i}"] - started)
        finally:
            await control.aclose()
            server.stop()
    return {
        "ok": ok,
        "n": repeats,
        "setup": statistics.median(setup),
        "first": statistics.median(latency),
        "wall": statistics.median(wall),
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
    parser.add_argument("--harnesses", default="codex,claude-code", help="comma-separated; '' for none")
    parser.add_argument("--harness-repeats", type=int, default=3)
    args = parser.parse_args()

    stamps = FirstCall(ScriptedUpstream().app())
    with serve_in_thread(stamps) as upstream:
        sbx = asyncio.run(_batch(upstream.url, stamps, args.rollouts, args.concurrency, sandboxed=True))
        host = asyncio.run(_batch(upstream.url, stamps, args.rollouts, args.concurrency, sandboxed=False))
    bare_sbx, bare_plain = asyncio.run(_bare(args.bare_repeats))
    names = [n for n in args.harnesses.split(",") if n]
    harnesses = {n: asyncio.run(_harness_runs(n, args.harness_repeats)) for n in names}

    print(f"trivial harness, {args.rollouts} rollouts, {args.concurrency} at a time (local backend)")
    print(f"{'':22}{'ok':>5}{'wall s':>9}{'rollouts/min':>14}{'first call p50 s':>18}{'p95 s':>8}")
    for name, r in (("bubblewrap sandbox", sbx), ("no sandbox (baseline)", host)):
        row = f"{r['ok']:>5}{r['wall']:>9.2f}{r['per_min']:>14.0f}{r['p50']:>18.3f}{r['p95']:>8.3f}"
        print(f"{name:22}{row}")
    print(
        f"sandbox / baseline: throughput x{sbx['per_min'] / host['per_min']:.2f}, "
        f"first-call latency p50 x{sbx['p50'] / host['p50']:.2f}"
    )
    print(
        f"bare start-to-exit of /bin/true (median of {args.bare_repeats}): sandbox {bare_sbx * 1000:.0f} ms, "
        f"plain subprocess {bare_plain * 1000:.1f} ms (x{bare_sbx / bare_plain:.0f})"
    )
    if harnesses:
        print(f"real harnesses: forgelab training rollouts, local backend (median of {args.harness_repeats})")
        print(f"{'':14}{'ok':>6}{'setup s':>9}{'start->first call s':>21}{'start->exit s':>15}")
        for name, r in harnesses.items():
            row = f"{r['setup']:>9.2f}{r['first']:>21.2f}{r['wall']:>15.2f}"
            print(f"{name:14}{r['ok']:>3}/{r['n']:<2}{row}")


if __name__ == "__main__":
    main()
