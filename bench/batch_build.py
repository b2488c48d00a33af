"""Build a training batch from synthetic call records: records/s, peak memory, and linear scaling.

Each size runs in a fresh process (so peak RSS is its own) and streams rollouts the way the trainer reads
them: a rollout's JSONL lines are parsed (`CallRecord.model_validate_json`), rebuilt into a trajectory
(prefix merge, tagging), checked by the failure policy, then GRPO, credit and token rows for the batch.
Generating the synthetic JSON is timed separately and left out. Records/s is per CPU second of the process
(`time.process_time`), so other load on a shared machine does not distort the scaling ratio; wall time is
printed beside it.

Sizes model an agent harness with a compact system prompt: per rollout `--calls` calls; the first prompt
has `--system-tokens`, every turn adds `--response-tokens` sampled tokens and `--observation-tokens` of
tool output (defaults: 16 calls, 3,000 / 120 / 250 tokens: prompts grow from 3k to ~9k tokens, ~40 KB
of JSON per record). Groups of `--group-size` rollouts per task, rewards 0/1 alternating.

    .venv/bin/python bench/batch_build.py [--records 10000 100000] [--credit masked] [--no-merge]
"""

import argparse
import json
import resource
import subprocess
import sys
import time
from collections.abc import Iterator

import numpy as np

from forge_eval.proxy.records import CallRecord, RolloutRecord
from forge_eval.training.batch import build_batch
from forge_eval.training.credit import credit_variant
from forge_eval.training.trajectories import Trajectory, build_trajectory

TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
    for n in ("bash", "read", "write", "edit", "ls", "grep", "glob", "web_fetch", "todo", "submit")
]
SYSTEM = "You are a coding agent working in a sandbox. " * 60  # ~2.7 KB of text like a real system prompt


def _ids(rng: np.random.Generator, n: int) -> str:
    return ",".join(map(str, rng.integers(100, 150_000, n).tolist()))


def rollout_lines(index: int, args: argparse.Namespace, rng: np.random.Generator) -> list[bytes]:
    """The JSONL lines of one synthetic rollout, built as text (dumping 10k-int lists per call is slow)."""
    rollout_id = f"r{index}"
    conversation = _ids(rng, args.system_tokens)
    served = json.dumps(
        {
            "model": "policy",
            "tools": TOOLS,
            "messages": [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": "fix the failing test"},
            ],
        }
    )
    lines = []
    for seq in range(args.calls):
        last = seq == args.calls - 1
        response = _ids(rng, args.response_tokens)
        logprobs = ",".join(["-0.125"] * args.response_tokens)
        message = (
            {"role": "assistant", "content": "done"}
            if last
            else {
                "role": "assistant",
                "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
                ],
            }
        )
        upstream = json.dumps({"choices": [{"message": message}]})
        lines.append(
            f'{{"call_id":"{rollout_id}-{seq}","rollout_id":"{rollout_id}","seq":{seq},"api":"chat",'
            f'"path":"/v1/chat/completions","harness":"react","model_alias":"policy",'
            f'"original_request":{served},"served_request":{served},"upstream_response":{upstream},'
            f'"finish_reason":"{"stop" if last else "tool_calls"}","prompt_token_ids":[{conversation}],'
            f'"completion_token_ids":[{response}],"completion_logprobs":[{logprobs}],"policy_version":1,'
            f'"t_received":{1000.0 + seq},"t_delivered":{1000.5 + seq}}}'.encode()
        )
        conversation = f"{conversation},{response},{_ids(rng, args.observation_tokens)}"
    return lines


def trajectories(n_rollouts: int, args: argparse.Namespace, clock: dict[str, float]) -> Iterator[Trajectory]:
    """Stream rollouts: generate (timed apart), then parse and rebuild (counted as batch building)."""
    rng = np.random.default_rng(0)
    for i in range(n_rollouts):
        t0, c0 = time.perf_counter(), time.process_time()
        lines = rollout_lines(i, args, rng)
        clock["generate"] += time.perf_counter() - t0
        clock["generate_cpu"] += time.process_time() - c0
        rollout = RolloutRecord(
            rollout_id=f"r{i}",
            harness="react",
            group_uid=f"g{i // args.group_size}",
            termination="completed",
            reward=float(i % 2),
            n_calls=args.calls,
        )
        yield build_trajectory(rollout, [CallRecord.model_validate_json(line) for line in lines])


def run_one(n_records: int, args: argparse.Namespace) -> dict[str, float]:
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    clock = {"generate": 0.0, "generate_cpu": 0.0}
    n_rollouts = n_records // args.calls
    start, start_cpu = time.perf_counter(), time.process_time()
    batch = build_batch(
        trajectories(n_rollouts, args, clock), credit=credit_variant(args.credit), merge=args.merge
    )
    build = time.perf_counter() - start - clock["generate"]
    build_cpu = time.process_time() - start_cpu - clock["generate_cpu"]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tokens = sum(len(r.prompt_ids) + len(r.response_ids) for r in batch.rows)
    return {
        "records": n_rollouts * args.calls,
        "rollouts": n_rollouts,
        "rows": batch.stats.rows,
        "build_s": build,
        "build_cpu_s": build_cpu,
        "generate_s": clock["generate"],
        "records_per_s": n_rollouts * args.calls / build_cpu,
        "peak_rss_mb": peak / 1024,
        "rss_growth_mb": (peak - baseline) / 1024,
        "batch_tokens_m": tokens / 1e6,
        "merge_rate": batch.stats.merge.merge_rate,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--calls", type=int, default=16)
    parser.add_argument("--system-tokens", type=int, default=3000)
    parser.add_argument("--response-tokens", type=int, default=120)
    parser.add_argument("--observation-tokens", type=int, default=250)
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--credit", default="masked")
    parser.add_argument("--no-merge", dest="merge", action="store_false")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args)))
        return
    results = []
    for n in args.records:
        child = [sys.executable, __file__, "--one", str(n), *sys.argv[1:]]
        results.append(json.loads(subprocess.run(child, check=True, capture_output=True, text=True).stdout))
        r = results[-1]
        print(
            f"{r['records']:>7} records  {r['rollouts']:>5} rollouts  {r['rows']:>6} rows  "
            f"build {r['build_cpu_s']:7.2f} CPU s ({r['build_s']:.2f} wall)  "
            f"{r['records_per_s']:6.0f} records/CPU-s  "
            f"peak RSS {r['peak_rss_mb']:7.0f} MB (+{r['rss_growth_mb']:.0f})  "
            f"batch {r['batch_tokens_m']:.1f} M tokens  merge rate {r['merge_rate']:.2f}",
            flush=True,
        )
    if len(results) >= 2:
        a, b = results[0], results[-1]
        size = b["records"] / a["records"]
        print(
            f"scaling {a['records']} -> {b['records']} records (x{size:.0f}): build time x"
            f"{b['build_cpu_s'] / a['build_cpu_s']:.1f}, "
            f"records/s x{b['records_per_s'] / a['records_per_s']:.2f} "
            f"(linear: x{size:.0f} and x1.00), RSS growth x{b['rss_growth_mb'] / a['rss_growth_mb']:.1f}"
        )


if __name__ == "__main__":
    main()
