"""Recording-proxy overhead: the same chat requests sent straight to a fast local upstream and through the
proxy, side by side, at concurrency 1 and 32, streamed and not.

The upstream is forge-eval's scripted upstream (microseconds of work per call), so the difference is
the proxy's own cost: parsing, keying, the upstream hop, SSE synthesis and the durable record write.
Upstream, proxy and load generator each run in their own process (all on this machine's cores).
Targets (issue 3): <= 2 ms added p50 latency, >= 500 calls/s on 2 cores.
Then, the Inspect-model upstream: a call through the proxy into `Model.generate()` (mockllm, inside one
Inspect sample) against `generate()` called directly (for scale: Inspect's in-process agent bridge
costs ~15 ms a call, the sandbox bridge ~2 s).
Last, memory per live rollout: bytes the proxy retains per call within one rollout (tracemalloc), with the
request-hash index bounded (now) and unbounded (as before issue 8), side by side in one run.

    .venv/bin/python bench/proxy_overhead.py [--calls 2000] [--seconds 20]
"""

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import aiohttp
import httpx

from forge_eval.proxy import free_port

UPSTREAM = """
import sys, uvicorn
from forge_eval.proxy import ScriptedUpstream
uvicorn.run(ScriptedUpstream(keep_requests=False).app(), host="127.0.0.1", port=int(sys.argv[1]),
            log_level="warning", access_log=False)
"""
SECRET = "bench-secret"
ADMIN_KEY = "bench-admin-key"


def body(stream: bool) -> dict:
    """A mid-sized agent turn (~6 KB: system prompt, history, two tools)."""
    tools = [
        {
            "type": "function",
            "function": {
                "name": n,
                "description": "d" * 300,
                "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
            },
        }
        for n in ("exec", "read")
    ]
    messages = [
        {"role": "system", "content": "You are a coding agent. " * 120},
        {"role": "user", "content": "create hello.txt containing hi"},
    ]
    return {
        "model": "forge-policy",
        "messages": messages,
        "tools": tools,
        "stream": stream,
        "temperature": 0.5,
    }


def wait_ready(url: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"server for {url} exited with {process.returncode}")
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise SystemExit(f"server for {url} did not start")


async def load(url: str, headers: dict, stream: bool, concurrency: int, calls: int, seconds: float) -> dict:
    """`calls` requests (or as many as fit in `seconds`) with `concurrency` workers on keep-alive
    connections. The client is aiohttp, the lightest load generator at hand, so that it leaves CPU to the
    servers being measured."""
    payload = json.dumps(body(stream)).encode()
    latencies: list[float] = []
    remaining = calls
    stop_at = time.perf_counter() + seconds
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(
        connector=connector, headers={**headers, "content-type": "application/json"}
    ) as c:

        async def post() -> None:
            async with c.post(url, data=payload) as answer:
                await answer.read()
                if answer.status != 200:
                    raise SystemExit(f"{url} answered {answer.status}")

        async def worker() -> None:
            nonlocal remaining
            while remaining > 0 and time.perf_counter() < stop_at:
                remaining -= 1
                t0 = time.perf_counter()
                await post()
                latencies.append(time.perf_counter() - t0)

        await asyncio.gather(*(post() for _ in range(concurrency)))  # open the connections
        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall = time.perf_counter() - t0
    latencies.sort()
    return {
        "n": len(latencies),
        "p50_ms": 1000 * statistics.median(latencies),
        "p99_ms": 1000 * latencies[int(0.99 * (len(latencies) - 1))],
        "calls_s": len(latencies) / wall,
    }


def best_of(repeats: int, *args: object) -> dict:
    """The median run of `repeats` (by p50): one measurement is at the mercy of other load on the cores."""
    runs = sorted((asyncio.run(load(*args)) for _ in range(repeats)), key=lambda r: r["p50_ms"])  # type: ignore[arg-type]
    return runs[len(runs) // 2]


def inspect_overhead(calls: int = 50) -> tuple[float, float]:
    """Median ms per call of `generate()` direct and through the proxy with an `InspectUpstream`."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.solver import Generate, TaskState, solver

    from forge_eval.proxy import InspectUpstream, ProxyConfig, create_app, serve_in_task
    from forge_eval.proxy.records import RolloutRecord

    def output(*_: object) -> ModelOutput:
        answer = ModelOutput.from_content("mockllm/model", "ok")
        answer.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer download
        return answer

    medians: dict[str, float] = {}

    @solver
    def measure():  # type: ignore[no-untyped-def]
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            model = get_model()
            direct = []
            for _ in range(calls):
                t0 = time.perf_counter()
                await model.generate("hi")
                direct.append(time.perf_counter() - t0)
            with tempfile.TemporaryDirectory() as records:
                app = create_app(ProxyConfig(records_dir=records, secret=SECRET), InspectUpstream(None))
                app.state.proxy.rollouts.add(RolloutRecord(rollout_id="inspect"))
                proxied = []
                async with serve_in_task(app) as url, httpx.AsyncClient() as client:
                    for _ in range(calls):
                        t0 = time.perf_counter()
                        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
                        (
                            await client.post(f"{url}/r/inspect/0/v1/chat/completions", json=body)
                        ).raise_for_status()
                        proxied.append(time.perf_counter() - t0)
            medians["direct"] = 1000 * statistics.median(direct)
            medians["proxy"] = 1000 * statistics.median(proxied)
            return state

        return solve

    with tempfile.TemporaryDirectory() as logs:
        model = get_model("mockllm/model", custom_outputs=output)
        eval(Task(dataset=[Sample(input="x")], solver=measure()), model=model, display="none", log_dir=logs)
    return medians["direct"], medians["proxy"]


class _FixedUpstream:
    """An in-process upstream that answers every call with the same short turn: the memory measurement
    wants only the proxy's own retained state, with no network or upstream buffers in the picture."""

    async def complete(self, request, sampling, *, route_key, call_seq):  # type: ignore[no-untyped-def]
        from forge_eval.proxy import CanonicalResponse, UpstreamResult

        response = CanonicalResponse(text="ok", prompt_token_ids=[1, 2], completion_token_ids=[3])
        return UpstreamResult(response, request.body("m", sampling), t_start=time.time(), t_end=time.time())

    async def count_tokens(self, request):  # type: ignore[no-untyped-def]
        return 1

    async def aclose(self) -> None:
        return None


def retained_memory(calls: int, bounded: bool) -> tuple[int, int]:
    """Bytes the proxy's code retains over `calls` calls within one live rollout (blocks allocated under
    forge_eval/proxy, still alive after gc: the client's own allocations are left out), and the
    request-index size at the end."""
    import gc
    import tracemalloc

    from forge_eval.proxy import ProxyConfig, _rollouts, create_app
    from forge_eval.proxy.records import RolloutRecord

    cap = _rollouts.RECENT_REQUESTS
    _rollouts.RECENT_REQUESTS = cap if bounded else 10**12

    async def run() -> tuple[int, int]:
        with tempfile.TemporaryDirectory() as records:
            app = create_app(ProxyConfig(records_dir=records, secret=SECRET), _FixedUpstream())
            state, _ = app.state.proxy.rollouts.add(RolloutRecord(rollout_id="mem"))
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://proxy") as client:

                async def call(i: int) -> None:
                    body = {"model": "m", "messages": [{"role": "user", "content": f"turn {i}"}]}
                    (await client.post("/r/mem/0/v1/chat/completions", json=body)).raise_for_status()

                for i in range(200):  # warm-up: caches, first-use allocations
                    await call(i)
                gc.collect()
                tracemalloc.start(64)  # deep tracebacks: attribute each block to the proxy or not
                before = tracemalloc.take_snapshot()
                for i in range(200, 200 + calls):
                    await call(i)
                gc.collect()
                after = tracemalloc.take_snapshot()
                tracemalloc.stop()
                proxy_only = [tracemalloc.Filter(True, "*/forge_eval/proxy/*", all_frames=True)]
                kept = after.filter_traces(proxy_only)
                grown = kept.compare_to(before.filter_traces(proxy_only), "lineno")
                app.state.proxy.writer.close()
                return sum(s.size_diff for s in grown), len(state.calls_by_hash)

    try:
        return asyncio.run(run())
    finally:
        _rollouts.RECENT_REQUESTS = cap


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="requests per measurement (bounded)")
    parser.add_argument("--seconds", type=float, default=10.0, help="time cap per measurement")
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement (the median is shown)")
    args = parser.parse_args()
    upstream_port, proxy_port, control_port = free_port(), free_port(), free_port()
    records = tempfile.mkdtemp(prefix="forge-bench-records-")
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    proxy_env = {**env, "FORGE_PROXY_SECRET": SECRET, "FORGE_PROXY_ADMIN_KEY": ADMIN_KEY}
    upstream = subprocess.Popen([sys.executable, "-c", UPSTREAM, str(upstream_port)], env=env)
    proxy = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "forge_eval._cli.main",
            "proxy",
            "serve",
            "--upstream",
            f"http://127.0.0.1:{upstream_port}",
            "--port",
            str(proxy_port),
            "--control-port",
            str(control_port),
            "--records",
            records,
            "--served-model",
            "scripted-policy",
        ],
        env=proxy_env,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_ready(f"http://127.0.0.1:{upstream_port}/v1/models", upstream)
        wait_ready(f"http://127.0.0.1:{proxy_port}/healthz", proxy)
        created = httpx.post(
            f"http://127.0.0.1:{control_port}/rollouts",
            json={"rollout_id": "bench"},
            headers={"Authorization": f"Bearer {ADMIN_KEY}"},
        ).json()
        direct = (f"http://127.0.0.1:{upstream_port}/v1/chat/completions", {})
        proxied = (
            f"http://127.0.0.1:{proxy_port}/v1/chat/completions",
            {"Authorization": f"Bearer {created['api_key']}"},
        )
        load_avg = os.getloadavg()[0]
        size = len(json.dumps(body(False)))
        print(f"cores: {os.cpu_count()} (load {load_avg:.1f}); request {size} bytes")
        print("direct: the upstream answers JSON even to stream requests (the proxy synthesizes the SSE)")
        print(
            f"{'mode':<12}{'conc':>5} | {'direct p50':>10} {'p99':>7} {'calls/s':>8} | "
            f"{'proxy p50':>10} {'p99':>7} {'calls/s':>8} | {'added p50':>9} {'added p99':>9}"
        )
        for stream in (False, True):
            for concurrency in (1, 32):
                calls = args.calls if concurrency > 1 else max(200, args.calls // 5)
                d = best_of(args.repeats, *direct, stream, concurrency, calls, args.seconds)
                p = best_of(args.repeats, *proxied, stream, concurrency, calls, args.seconds)
                mode = "stream" if stream else "json"
                direct_cols = f"{d['p50_ms']:>8.2f}ms {d['p99_ms']:>5.1f}ms {d['calls_s']:>8.0f}"
                proxy_cols = f"{p['p50_ms']:>8.2f}ms {p['p99_ms']:>5.1f}ms {p['calls_s']:>8.0f}"
                added = f"{p['p50_ms'] - d['p50_ms']:>7.2f}ms {p['p99_ms'] - d['p99_ms']:>7.1f}ms"
                print(f"{mode:<12}{concurrency:>5} | {direct_cols} | {proxy_cols} | {added}", flush=True)
    finally:
        for process in (proxy, upstream):
            process.terminate()
            process.wait(timeout=10)
        shutil.rmtree(records, ignore_errors=True)
    direct_ms, proxy_ms = inspect_overhead()
    print(
        f"Inspect upstream (mockllm, p50 of 50 calls): generate() {direct_ms:.2f} ms, through the proxy "
        f"{proxy_ms:.2f} ms (+{proxy_ms - direct_ms:.2f} ms, each call a ModelEvent)"
    )
    print("memory the proxy retains within one live rollout (tracemalloc, after gc):")
    for calls in (300, 1200):
        now, index_now = retained_memory(calls, bounded=True)
        unbounded, index_before = retained_memory(calls, bounded=False)
        print(
            f"  {calls:>5} calls: bounded index {now / 1024:>6.1f} KiB ({now / calls:>5.1f} B/call, "
            f"{index_now} entries) | unbounded (before) {unbounded / 1024:>6.1f} KiB "
            f"({unbounded / calls:>5.1f} B/call, {index_before} entries)"
        )


if __name__ == "__main__":
    main()
