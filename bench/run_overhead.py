"""forge-eval run vs plain Inspect on the same tasks, seeds and scripted model, side by side.

Both sides run as fresh processes against one scripted OpenAI-compatible server (it answers every
call with submit("42")), so the model costs the same and the ratio isolates forge-eval's overhead:
run-directory bookkeeping, reading the logs back, the bootstrap CIs and the HTML report.
Target: <= 1.10x.

    .venv/bin/python bench/run_overhead.py [--benchmark forgelab] [--seeds 2] [--epochs 2] [--repeats 3]
"""

import argparse
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

PLAIN = """
import sys
from inspect_ai import eval
from forge_eval.benchmarks import BENCHMARKS
bench = BENCHMARKS.get(sys.argv[1])
seeds, epochs, log_dir = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
tasks = [bench.task(seed=s, harness=bench.default_harness) for s in range(seeds)]
eval(tasks, model="openai-api/rec/m", epochs=epochs, log_dir=log_dir, max_tasks=len(tasks), display="none")
"""


def timed(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"command failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-3000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", default="forgelab")
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    python = sys.executable
    forge = str(Path(python).with_name("forge-eval"))
    plain_times, forge_times = [], []
    with recording_server() as (url, seen), tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "REC_BASE_URL": url, "REC_API_KEY": "bench", "INSPECT_DISPLAY": "none"}
        for i in range(args.repeats):
            plain_cmd = [
                python,
                "-c",
                PLAIN,
                args.benchmark,
                str(args.seeds),
                str(args.epochs),
                f"{tmp}/plain{i}",
            ]
            forge_cmd = [
                forge,
                "run",
                args.benchmark,
                "--seeds",
                str(args.seeds),
                "--epochs",
                str(args.epochs),
                "--model",
                "openai-api/rec/m",
                "--out",
                f"{tmp}/forge{i}",
            ]
            # alternate the order so that warm caches favour neither side
            if i % 2 == 0:
                plain_times.append(timed(plain_cmd, env))
                forge_times.append(timed(forge_cmd, env))
            else:
                forge_times.append(timed(forge_cmd, env))
                plain_times.append(timed(plain_cmd, env))
        calls = len(seen)
    plain, forge_t = statistics.median(plain_times), statistics.median(forge_times)
    print(
        f"benchmark={args.benchmark} seeds={args.seeds} epochs={args.epochs} repeats={args.repeats} "
        f"model calls={calls}"
    )
    print(f"plain inspect eval : median {plain:6.2f} s  {[round(t, 2) for t in plain_times]}")
    print(f"forge-eval run     : median {forge_t:6.2f} s  {[round(t, 2) for t in forge_times]}")
    print(f"ratio forge/plain  : {forge_t / plain:.3f}x (target <= 1.10x)")


if __name__ == "__main__":
    main()
