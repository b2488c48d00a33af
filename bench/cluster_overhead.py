"""forge-eval run on the local executor vs the Ray executor (a 1-worker cluster here), side by side.

Both sides are the same `forge-eval run forgelab` command against one scripted OpenAI-compatible server
(it answers every call with submit("42")), so the model costs the same and the ratio isolates what the
cluster adds: connecting to Ray, a worker process per shard (importing forge-eval, planning the run
again), the shard's logs through the object store, and the merge. The cluster (a head without CPUs and
one worker raylet with --cpus CPUs) is started once, as a long-lived cluster would be, and shut down at
the end. Targets: the Ray run within 1.10x of the local one, <= 2 s of overhead per shard.

    .venv/bin/python bench/cluster_overhead.py [--seeds 2] [--epochs 2] [--shards 2] [--cpus 2] [--repeats 3]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.runner._recording_server import recording_server  # noqa: E402


def timed(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"command failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-3000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the one worker node")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from ray.cluster_utils import Cluster

    forge = str(Path(sys.executable).with_name("forge-eval"))
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    cluster.add_node(num_cpus=args.cpus)
    cluster.wait_for_nodes()
    local_times, ray_times, shard_seconds = [], [], []
    try:
        with recording_server() as (url, seen), tempfile.TemporaryDirectory() as tmp:
            env = {**os.environ, "REC_API_KEY": "bench", "INSPECT_DISPLAY": "none"}
            env.pop("FORGE_CLUSTER", None)
            base = [forge, "run", "forgelab", "--seeds", str(args.seeds), "--epochs", str(args.epochs)]
            base += ["--model", "openai-api/rec/m", "--model-base-url", url]
            for i in range(args.repeats):
                local_cmd = [*base, "--out", f"{tmp}/local{i}"]
                ray_cmd = [*base, "--out", f"{tmp}/ray{i}", "--cluster", f"ray:{cluster.address}"]
                ray_cmd += ["--shards", str(args.shards)]
                # alternate the order so that warm caches favour neither side
                if i % 2 == 0:
                    local_times.append(timed(local_cmd, env))
                    ray_times.append(timed(ray_cmd, env))
                else:
                    ray_times.append(timed(ray_cmd, env))
                    local_times.append(timed(local_cmd, env))
                shards = json.loads(Path(f"{tmp}/ray{i}/shards.json").read_text()).values()
                shard_seconds += [_seconds(s["started"], s["ended"]) for s in shards]
            calls = len(seen)
    finally:
        cluster.shutdown()
    local, ray_t = statistics.median(local_times), statistics.median(ray_times)
    print(
        f"forgelab seeds={args.seeds} epochs={args.epochs} shards={args.shards} worker cpus={args.cpus} "
        f"repeats={args.repeats} model calls={calls}"
    )
    print(f"local executor : median {local:6.2f} s  {[round(t, 2) for t in local_times]}")
    print(f"ray executor   : median {ray_t:6.2f} s  {[round(t, 2) for t in ray_times]}")
    print(f"ratio ray/local: {ray_t / local:.3f}x (target <= 1.10x)")
    print(
        f"overhead per shard (ray - local) / shards: {(ray_t - local) / args.shards:.2f} s (target <= 2 s); "
        f"a shard's own time on its worker (plan, model check, eval): median "
        f"{statistics.median(shard_seconds):.0f} s"
    )


def _seconds(started: str, ended: str) -> float:
    from datetime import datetime

    return (datetime.fromisoformat(ended) - datetime.fromisoformat(started)).total_seconds()


if __name__ == "__main__":
    main()
