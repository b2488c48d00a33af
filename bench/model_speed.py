"""Speed of the embedded models as forge-eval serves them (child process, HTTP, CPU threads).

For each model and thread count: start-up time until /health answers; prompt and generation tok/s
of one request with a long prompt (llama.cpp's own timings, prompt cache off); end-to-end generated
tokens per wall-clock second of 1 and of 2 concurrent short-prompt requests (the 2 connections a run opens)
and their ratio; the server's peak RSS.
Thread counts run side by side, on the idle machine and under load (`--background N` busy processes
that each keep one core busy), because on a busy 2-core machine 2 llama.cpp threads (which meet at a
barrier after every operation) can be many times slower than 1; the last column is the generation
speed relative to 1 thread under the same load (what `forge_eval.models` picks its thread count from).

    .venv/bin/python bench/model_speed.py [--models qwen-0.5b smollm2] [--threads 1 2]
        [--background 0 1] [--prompt-tokens 400] [--gen-tokens 48] [--repeats 2]
"""

import argparse
import multiprocessing
import os
import statistics
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx

from forge_eval.models import EMBEDDED_MODELS, EmbeddedModelServer

SENTENCE = "The quick brown fox jumps over the lazy dog while the farmer counts his sheep. "


def _request(server: EmbeddedModelServer, prompt_tokens: int, gen_tokens: int, seed: int) -> dict:
    # ~17 tokens per sentence; the exact count is read back from the response's usage.
    text = SENTENCE * max(1, prompt_tokens // 17) + f"\nRequest {seed}: summarize the text above."
    body = {
        "model": server.model_name,
        "messages": [{"role": "user", "content": text}],
        "max_tokens": gen_tokens,
        "temperature": 0.7,
        "seed": seed,
        "ignore_eos": True,  # generate exactly gen_tokens, so runs are comparable
        "cache_prompt": False,
    }
    response = httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=600)
    response.raise_for_status()
    return response.json()


def _peak_rss_gb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024**2
    return float("nan")


def _end_to_end_tok_s(server: EmbeddedModelServer, gen_tokens: int, seeds: tuple[int, ...]) -> float:
    """Generated tokens per wall-clock second of `len(seeds)` concurrent short-prompt requests."""
    t0 = time.perf_counter()
    with ThreadPoolExecutor(len(seeds)) as pool:
        results = list(pool.map(lambda s: _request(server, 64, gen_tokens, s), seeds))
    return sum(r["usage"]["completion_tokens"] for r in results) / (time.perf_counter() - t0)


def _spin() -> None:
    while True:
        pass


@contextmanager
def background(n: int) -> Iterator[None]:
    """`n` processes that each keep one core busy (another job on the machine), for the block."""
    procs = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(n)]
    for proc in procs:
        proc.start()
    try:
        yield
    finally:
        for proc in procs:
            proc.terminate()
            proc.join()


def measure(model: str, threads: int, args: argparse.Namespace) -> dict[str, float]:
    start = time.perf_counter()
    with EmbeddedModelServer(model=model, threads=threads) as server:
        load_s = time.perf_counter() - start
        prompt, gen, single, pair = [], [], [], []
        for i in range(args.repeats):
            timings = _request(server, args.prompt_tokens, args.gen_tokens, seed=i)["timings"]
            prompt.append(timings["prompt_per_second"])
            gen.append(timings["predicted_per_second"])
            single.append(_end_to_end_tok_s(server, args.gen_tokens, (100 + 3 * i,)))
            pair.append(_end_to_end_tok_s(server, args.gen_tokens, (101 + 3 * i, 102 + 3 * i)))
        rss = _peak_rss_gb(server.pid)
    return {
        "load_s": load_s,
        "prompt_tok_s": statistics.median(prompt),
        "gen_tok_s": statistics.median(gen),
        "single_tok_s": statistics.median(single),
        "pair_tok_s": statistics.median(pair),
        "peak_rss_gb": rss,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--models", nargs="+", default=["qwen-0.5b", "smollm2"], choices=EMBEDDED_MODELS.names()
    )
    parser.add_argument("--prompt-tokens", type=int, default=400)
    parser.add_argument("--gen-tokens", type=int, default=48)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument(
        "--background", type=int, nargs="+", default=[0, 1], help="busy processes during a measurement"
    )
    args = parser.parse_args()
    print(
        f"prompt ~{args.prompt_tokens} tokens, {args.gen_tokens} generated, median of {args.repeats}, "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    header = (
        f"{'model':<10} {'busy':>4} {'threads':>7} {'load s':>7} {'prompt tok/s':>13} {'gen tok/s':>10} "
        f"{'1 request tok/s':>16} {'2 concurrent tok/s':>19} {'ratio 2/1':>10} {'peak RSS GB':>12} "
        f"{'gen vs 1 thread':>16}"
    )
    print(header)
    for model in args.models:
        if not EMBEDDED_MODELS.get(model).installed():
            print(f"{model:<10} (weights not installed)")
            continue
        for busy in args.background:
            one_thread: float | None = None
            with background(busy):
                for threads in args.threads:
                    r = measure(model, threads, args)
                    one_thread = r["gen_tok_s"] if threads == 1 else one_thread
                    relative = f"{r['gen_tok_s'] / one_thread:16.2f}" if one_thread else f"{'':>16}"
                    print(
                        f"{model:<10} {busy:4d} {threads:7d} {r['load_s']:7.1f} {r['prompt_tok_s']:13.1f} "
                        f"{r['gen_tok_s']:10.1f} {r['single_tok_s']:16.1f} {r['pair_tok_s']:19.1f} "
                        f"{r['pair_tok_s'] / r['single_tok_s']:10.2f} {r['peak_rss_gb']:12.2f} {relative}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
