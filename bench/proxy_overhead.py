"""Recording-proxy overhead: the same upstream work straight and through the proxy, side by side.

The upstream is a stub that answers every request with the bytes of forge-eval's scripted upstream's
answer to the first one (token ids and logprobs included), so the difference is the proxy's own cost:
parsing, keying, the upstream hop, SSE synthesis and the record write. Both legs ask the upstream for the
same work: the direct leg sends the very body the proxy served upstream (read back from the proxy's
record), and each leg reports the upstream's CPU per call, which should match. Upstream, proxy and load
generator each run in their own process; stub and load generator are raw asyncio protocols on uvloop
with httptools (a few tens of microseconds a call), so that the two cores measure the proxy. The proxy's
capacity per core (1000 / its CPU ms per call) is what it would serve with a core to itself.

Cells (JSON and stream, at 1, 8, 32 and 128 connections) run direct and proxied alternately, `--repeats`
times each, and report the median run: p50 and p99 latency, calls/s, the added latency (proxied minus
direct), the calls/s ratio, and the CPU each process spends per call (/proc/<pid>/stat).
Issue 24's goals: added p50 <= 0.5 ms and p99 <= 2 ms at one connection, >= 3,000 calls/s and >= 0.3x the
direct rate at 32 connections (JSON). The machine is shared: the load average is printed before and after.

Then the durability modes side by side (`--durability page-cache` against `fsync`, group-committed
fdatasync; records on the file system of the working directory, so that fsync reaches a disk), the
Inspect-model upstream (`Model.generate()` direct and through the proxy), and the memory the proxy retains
per live rollout (tracemalloc), with the request-hash index bounded and unbounded.

    .venv/bin/python bench/proxy_overhead.py [--seconds 3] [--repeats 3] [--quick] [--connections 1,8,32]
        [--sustained 60]
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
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httptools
import httpx
import uvloop

from forge_eval.proxy import free_port, read_calls

UPSTREAM = """
import asyncio, sys
import httptools, httpx, uvloop
from forge_eval.proxy import ScriptedUpstream

app = ScriptedUpstream(keep_requests=False).app()
answers = {}  # (method, path) -> the whole answer, as bytes


async def first_answer(method, path, body):
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://stub") as client:
        got = await client.request(method, path, content=body or None,
                                   headers={"content-type": "application/json"})
    head = f"HTTP/1.1 {got.status_code} OK\\r\\ncontent-type: application/json\\r\\n"
    return (head + f"content-length: {len(got.content)}\\r\\n\\r\\n").encode() + got.content


class Stub(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport, self.parser = transport, httptools.HttpRequestParser(self)

    def data_received(self, data):
        self.parser.feed_data(data)

    def on_message_begin(self):
        self.url, self.body = b"", b""

    def on_url(self, url):
        self.url += url

    def on_body(self, body):
        self.body += body

    def on_message_complete(self):
        key = (self.parser.get_method().decode(), self.url.decode())
        if key in answers:
            self.transport.write(answers[key])
        else:
            asyncio.ensure_future(self.first(key, self.body))

    async def first(self, key, body):
        answers[key] = await first_answer(*key, body)
        self.transport.write(answers[key])


async def main():
    server = await asyncio.get_running_loop().create_server(Stub, "127.0.0.1", int(sys.argv[1]))
    await server.serve_forever()

uvloop.run(main())
"""
SECRET = "bench-secret"
ADMIN_KEY = "bench-admin-key"
CONNECTIONS = (1, 8, 32, 128)
CLOCK_TICK = os.sysconf("SC_CLK_TCK")


def body(stream: bool) -> dict:
    """A mid-sized agent turn (~4 KB: system prompt, history, two tools), as a harness sends it."""
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


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICK


def wait_ready(url: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"server for {url} exited with {process.returncode}")
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise SystemExit(f"server for {url} did not start")


@dataclass
class Leg:
    """Where one side of a cell sends its calls, and whose CPU it watches."""

    url: str
    headers: dict
    payload: bytes
    proxy_pid: int | None
    upstream_pid: int
    records: Path | None = None  # the proxy's records directory


def empty_records(leg: Leg) -> None:
    """Cut the proxy's call records back to nothing after a run (~12.6 KB a call, ~40 MB/s at full rate), so
    that every cell starts alike rather than on the gigabytes the cells before it wrote; `--sustained`
    keeps them, as a long training run does."""
    if leg.records is not None:
        for path in leg.records.rglob("*.jsonl"):
            os.truncate(path, 0)


class _Caller(asyncio.Protocol):
    """One keep-alive connection of the load generator: a pre-encoded request written, the answer parsed
    by httptools (aiohttp spent ~0.2 ms of CPU a call, on the same two cores as the proxy it measures)."""

    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.transport: asyncio.Transport | None = None
        self.answered: asyncio.Future[int] | None = None
        self.body: list[bytes] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.parser.feed_data(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.answered is not None and not self.answered.done():
            self.answered.set_exception(ConnectionError(f"the server closed the connection: {exc}"))

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        assert self.answered is not None
        self.answered.set_result(self.parser.get_status_code())

    async def call(self, request: bytes) -> None:
        assert self.transport is not None
        self.answered, self.body = asyncio.get_running_loop().create_future(), []
        self.transport.write(request)
        status = await self.answered
        if status != 200:
            raise SystemExit(f"answered {status}: {b''.join(self.body)[:200]!r}")


def request_bytes(leg: Leg) -> tuple[str, int, bytes]:
    """(host, port, the whole request) of a leg, encoded once."""
    url = urlsplit(leg.url)
    head = f"POST {url.path} HTTP/1.1\r\nHost: {url.netloc}\r\nContent-Type: application/json\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in leg.headers.items())
    head += f"Content-Length: {len(leg.payload)}\r\n\r\n"
    return url.hostname or "127.0.0.1", url.port or 80, head.encode() + leg.payload


async def load(leg: Leg, concurrency: int, seconds: float) -> dict:
    """As many calls as fit in `seconds` from `concurrency` workers on open keep-alive connections."""
    latencies: list[float] = []
    stop_at = 0.0
    host, port, request = request_bytes(leg)
    loop = asyncio.get_running_loop()
    callers = [(await loop.create_connection(_Caller, host, port))[1] for _ in range(concurrency)]

    async def worker(caller: _Caller) -> None:
        while time.perf_counter() < stop_at:
            t0 = time.perf_counter()
            await caller.call(request)
            latencies.append(time.perf_counter() - t0)

    await asyncio.gather(*(c.call(request) for c in callers))  # warm each connection once
    cpu0 = {pid: cpu_seconds(pid) for pid in (leg.proxy_pid, leg.upstream_pid) if pid}
    own0 = time.process_time()
    t0 = time.perf_counter()
    stop_at = t0 + seconds
    await asyncio.gather(*(worker(c) for c in callers))
    wall = time.perf_counter() - t0
    own = time.process_time() - own0
    cpu = {pid: cpu_seconds(pid) - before for pid, before in cpu0.items()}
    for caller in callers:
        assert caller.transport is not None
        caller.transport.close()
    latencies.sort()
    n = len(latencies)
    return {
        "n": n,
        "p50_ms": 1000 * statistics.median(latencies),
        "p99_ms": 1000 * latencies[int(0.99 * (n - 1))],
        "calls_s": n / wall,
        "proxy_cpu_ms": 1000 * cpu[leg.proxy_pid] / n if leg.proxy_pid else None,
        "upstream_cpu_ms": 1000 * cpu[leg.upstream_pid] / n,
        "client_cpu_ms": 1000 * own / n,
    }


def median_run(runs: list[dict]) -> dict:
    """Each figure's median over the repeats (one run is at the mercy of other load on the cores)."""
    return {k: statistics.median(r[k] for r in runs) if runs[0][k] is not None else None for k in runs[0]}


def side_by_side(a: Leg, b: Leg, concurrency: int, seconds: float, repeats: int) -> tuple[dict, dict]:
    """Legs `a` and `b` alternately, `repeats` runs each (a b, b a, a b, ...), medians."""
    runs: dict[int, list[dict]] = {0: [], 1: []}
    for r in range(repeats):
        order = (0, 1) if r % 2 == 0 else (1, 0)
        for i in order:
            runs[i].append(uvloop.run(load((a, b)[i], concurrency, seconds)))
            empty_records((a, b)[i])
    return median_run(runs[0]), median_run(runs[1])


def start_proxy(
    upstream_port: int, records: Path, durability: str, env: dict
) -> tuple[subprocess.Popen, str, str]:
    port, control_port = free_port(), free_port()
    argv = [sys.executable, "-m", "forge_eval._cli.main", "proxy", "serve"]
    argv += ["--upstream", f"http://127.0.0.1:{upstream_port}", "--port", str(port)]
    argv += [
        "--control-port",
        str(control_port),
        "--records",
        str(records),
        "--served-model",
        "scripted-policy",
    ]
    argv += ["--durability", durability]
    process = subprocess.Popen(argv, env=env, stderr=subprocess.DEVNULL)
    wait_ready(f"http://127.0.0.1:{port}/healthz", process)
    created = httpx.post(
        f"http://127.0.0.1:{control_port}/rollouts",
        json={"rollout_id": "bench"},
        headers={"Authorization": f"Bearer {ADMIN_KEY}"},
    ).json()
    return process, f"http://127.0.0.1:{port}", created["api_key"]


def served_body(proxy_url: str, key: str, records: Path) -> bytes:
    """The body the proxy sends upstream for `body(...)` (the same for JSON and stream: it always asks the
    upstream for JSON and synthesizes the stream), read back from its record of one call."""
    answer = httpx.post(
        proxy_url + "/v1/chat/completions", json=body(False), headers={"Authorization": f"Bearer {key}"}
    )
    answer.raise_for_status()
    return json.dumps(read_calls(records, "bench")[-1].served_request).encode()


def fmt(run: dict) -> str:
    return f"{run['p50_ms']:>7.2f} {run['p99_ms']:>6.1f} {run['calls_s']:>7.0f}"


def overhead_table(direct: Leg, proxied: dict[bool, Leg], args: argparse.Namespace) -> list[dict]:
    print(
        f"{'mode':<7}{'conn':>5} | {'direct p50':>10} {'p99':>6} {'calls/s':>7} | "
        f"{'proxy p50':>9} {'p99':>6} {'calls/s':>7} | {'added p50':>9} {'p99':>6} | {'ratio':>5} | "
        f"{'proxy CPU':>9} {'calls/s/core':>12} | upstream, load generator CPU ms/call"
    )
    rows = []
    for stream in (False, True):
        for concurrency in args.connections:
            d, p = side_by_side(direct, proxied[stream], concurrency, args.seconds, args.repeats)
            mode = "stream" if stream else "json"
            rows.append({"mode": mode, "connections": concurrency, "direct": d, "proxy": p})
            print(
                f"{mode:<7}{concurrency:>5} | {fmt(d):>26} | {fmt(p):>25} | "
                f"{p['p50_ms'] - d['p50_ms']:>7.2f}ms {p['p99_ms'] - d['p99_ms']:>6.1f} | "
                f"{p['calls_s'] / d['calls_s']:>5.2f} | {p['proxy_cpu_ms']:>6.3f} ms "
                f"{1000 / p['proxy_cpu_ms']:>12.0f} | upstream {d['upstream_cpu_ms']:.3f} direct, "
                f"{p['upstream_cpu_ms']:.3f} proxied; load generator {d['client_cpu_ms']:.3f} direct, "
                f"{p['client_cpu_ms']:.3f} proxied",
                flush=True,
            )
    return rows


def goals(rows: list[dict]) -> None:
    by = {(r["mode"], r["connections"]): r for r in rows}
    checks = []
    for mode in ("json", "stream"):
        if (mode, 1) in by:
            r = by[(mode, 1)]
            added50 = r["proxy"]["p50_ms"] - r["direct"]["p50_ms"]
            added99 = r["proxy"]["p99_ms"] - r["direct"]["p99_ms"]
            checks.append((f"{mode}, 1 connection: added p50 {added50:.2f} ms <= 0.5", added50 <= 0.5))
            checks.append((f"{mode}, 1 connection: added p99 {added99:.2f} ms <= 2", added99 <= 2))
    if ("json", 32) in by:
        r = by[("json", 32)]
        rate, ratio = r["proxy"]["calls_s"], r["proxy"]["calls_s"] / r["direct"]["calls_s"]
        checks.append((f"json, 32 connections: {rate:.0f} calls/s >= 3000", rate >= 3000))
        checks.append((f"json, 32 connections: {ratio:.2f}x the direct rate >= 0.3", ratio >= 0.3))
    print("issue 24 goals: " + "; ".join(f"{text} {'yes' if ok else 'NO'}" for text, ok in checks))


def sustained(leg: Leg, seconds: float, concurrency: int = 32, window: float = 5.0) -> None:
    """JSON at `concurrency` connections for `seconds`, records kept: the rate once the page cache writes
    back what the proxy records (as in a long training run), one line a window."""
    print(f"sustained: json, {concurrency} connections, records kept; calls/s, proxy CPU, dirty page cache")
    rates = []
    for i in range(max(1, round(seconds / window))):
        run = uvloop.run(load(leg, concurrency, window))
        rates.append(run["calls_s"])
        meminfo = Path("/proc/meminfo").read_text().splitlines()
        dirty = next(line.split()[1] for line in meminfo if line.startswith("Dirty:"))
        size = sum(path.stat().st_size for path in leg.records.rglob("*.jsonl")) if leg.records else 0
        print(
            f"  {(i + 1) * window:>5.0f} s | {run['calls_s']:>6.0f} calls/s | {run['proxy_cpu_ms']:.3f} ms | "
            f"records {size / 2**20:>6.0f} MiB, dirty {int(dirty) / 1024:>6.0f} MiB",
            flush=True,
        )
    print(f"sustained median {statistics.median(rates):.0f} calls/s")
    empty_records(leg)


def durability_table(page: Leg, fsync: Leg, args: argparse.Namespace) -> None:
    print(
        f"{'durability':<12}{'conn':>5} | {'page-cache p50':>14} {'p99':>6} {'calls/s':>7} | "
        f"{'fsync p50':>9} {'p99':>6} {'calls/s':>7} | {'added p50':>9} | {'ratio':>5} | proxy CPU ms/call"
    )
    for concurrency in args.durability_connections:
        a, b = side_by_side(page, fsync, concurrency, args.seconds, args.repeats)
        print(
            f"{'json':<12}{concurrency:>5} | {fmt(a):>29} | {fmt(b):>25} | "
            f"{b['p50_ms'] - a['p50_ms']:>7.2f}ms | {b['calls_s'] / a['calls_s']:>5.2f} | "
            f"{a['proxy_cpu_ms']:.3f} page-cache, {b['proxy_cpu_ms']:.3f} fsync "
            f"({1000 / a['proxy_cpu_ms']:.0f} and {1000 / b['proxy_cpu_ms']:.0f} calls/s per core)",
            flush=True,
        )


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
                    # in-process, nothing waits on I/O: let the loop run what a served call leaves to
                    # it (its stopped watcher task), as a server's loop does between calls
                    await asyncio.sleep(0)

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
    parser.add_argument("--seconds", type=float, default=3.0, help="length of one run")
    parser.add_argument("--repeats", type=int, default=3, help="runs per leg and cell (medians are shown)")
    parser.add_argument("--quick", action="store_true", help="JSON and stream at 1 and 32 connections only")
    parser.add_argument(
        "--connections",
        type=lambda text: tuple(int(n) for n in text.split(",")),
        default=None,
        help="the connection counts of the overhead table, e.g. 1,8,32 (default 1,8,32,128; --quick 1,32)",
    )
    parser.add_argument(
        "--sustained",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="then JSON at 32 connections for this long with the records kept (writeback included)",
    )
    args = parser.parse_args()
    args.connections = args.connections or ((1, 32) if args.quick else CONNECTIONS)
    args.durability_connections = (1, 32) if args.quick else (1, 32, 128)
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "FORGE_PROXY_SECRET": SECRET}
    env["FORGE_PROXY_ADMIN_KEY"] = ADMIN_KEY
    upstream_port = free_port()
    workdir = Path(tempfile.mkdtemp(prefix=".forge-bench-proxy-", dir="."))  # a disk, for fsync
    upstream = subprocess.Popen([sys.executable, "-c", UPSTREAM, str(upstream_port)], env=env)
    started = [upstream]
    try:
        wait_ready(f"http://127.0.0.1:{upstream_port}/v1/models", upstream)
        proxy, proxy_url, key = start_proxy(upstream_port, workdir / "page-cache", "page-cache", env)
        started.append(proxy)
        served = served_body(proxy_url, key, workdir / "page-cache")
        auth = {"Authorization": f"Bearer {key}"}
        direct = Leg(f"http://127.0.0.1:{upstream_port}/v1/chat/completions", {}, served, None, upstream.pid)
        proxied = {
            s: Leg(
                proxy_url + "/v1/chat/completions",
                auth,
                json.dumps(body(s)).encode(),
                proxy.pid,
                upstream.pid,
                workdir / "page-cache",
            )
            for s in (False, True)
        }
        print(
            f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start; harness request "
            f"{len(proxied[False].payload)} B, served request {len(served)} B (both legs send it upstream); "
            f"{args.repeats} alternating runs of {args.seconds:g} s per leg and cell, medians"
        )
        rows = overhead_table(direct, proxied, args)
        goals(rows)
        fsync_proxy, fsync_url, fsync_key = start_proxy(upstream_port, workdir / "fsync", "fsync", env)
        started.append(fsync_proxy)
        fsync_leg = Leg(
            fsync_url + "/v1/chat/completions",
            {"Authorization": f"Bearer {fsync_key}"},
            proxied[False].payload,
            fsync_proxy.pid,
            upstream.pid,
            workdir / "fsync",
        )
        durability_table(proxied[False], fsync_leg, args)
        if args.sustained:
            sustained(proxied[False], args.sustained)
        print(f"load average {os.getloadavg()[0]:.2f} at the end")
    finally:
        for process in reversed(started):
            process.terminate()
            process.wait(timeout=20)
        shutil.rmtree(workdir, ignore_errors=True)
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
            f"{index_now} entries) | unbounded {unbounded / 1024:>6.1f} KiB "
            f"({unbounded / calls:>5.1f} B/call, {index_before} entries)"
        )


if __name__ == "__main__":
    main()
