"""How long README's first command, `make run`, takes from a fresh clone (package caches warm).

Each repeat clones the repository into a temporary folder and times `make setup` (virtual env, Python
packages, model weights) and then `make run` (the quick forgelab run over 2 seeds; set-up is already
done), whose sum is what a new user's `make run` costs. With `--deterministic` the same run is then
repeated in the last clone with `--deterministic`, side by side, for the ratio the run's summary quotes.
It prints each time, its ratio to the 8-minute target, the llama.cpp threads the model chose and the
load average around it (the machine should be otherwise idle: other work slows the embedded model, and
it takes fewer threads then), and the model's work from the run's Inspect logs, which is what the run's
time follows: calls, generated tokens, replies that reached the reply cap, prompt tokens processed
and taken from llama.cpp's cache.

    python bench/quickstart_time.py [--repeats 3] [--deterministic] [--source DIR]
"""

import argparse
import os
import re
import shutil
import subprocess
import tempfile
import time
from datetime import datetime
from pathlib import Path

from inspect_ai.event import ModelEvent
from inspect_ai.log import read_eval_log

TARGET_S = 8 * 60
ROOT = Path(__file__).resolve().parents[1]


def _timed(command: list[str], cwd: Path, log: Path) -> float:
    """Seconds `command` took; its output goes to `log`; a failure stops the bench with the log's tail."""
    started = time.perf_counter()
    with log.open("a") as out:
        done = subprocess.run(command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
    took = time.perf_counter() - started
    if done.returncode != 0:
        tail = log.read_text(errors="replace")[-3000:]
        raise SystemExit(f"{' '.join(command)} failed with exit status {done.returncode}:\n{tail}")
    return took


def _threads(log: Path) -> str:
    """The llama.cpp thread count the embedded model chose at its last start, as its log line says."""
    chosen = re.findall(r"with (\d+) llama\.cpp thread\(s\)", log.read_text(errors="replace"))
    return chosen[-1] if chosen else "?"


def _model_work(run_dir: Path) -> str:
    """The model's work in a run, summed over its Inspect logs' model calls (llama.cpp's timings)."""
    calls = generated = at_cap = processed = cached = 0
    for path in sorted((run_dir / "logs").glob("*.eval")):
        log = read_eval_log(str(path))
        cap = log.plan.config.max_tokens
        for sample in log.samples or []:
            for event in sample.events:
                if not isinstance(event, ModelEvent) or event.output.usage is None:
                    continue
                calls += 1
                generated += event.output.usage.output_tokens
                at_cap += cap is not None and event.output.usage.output_tokens >= cap
                timings = (event.call.response or {}).get("timings", {}) if event.call else {}
                processed += timings.get("prompt_n", 0)
                cached += timings.get("cache_n", 0)
    return (
        f"{calls} model calls, {generated:,} tokens generated, {at_cap} replies at the cap, "
        f"{processed:,} prompt tokens processed, {cached:,} from the cache"
    )


def _load() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def _minutes(seconds: float) -> str:
    whole = round(seconds)  # rounded once: 779.6 s is 13 min 00 s, not 12 min 60 s
    return f"{whole // 60} min {whole % 60:02d} s"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--deterministic", action="store_true", help="also time the run with --deterministic")
    parser.add_argument("--source", type=Path, default=ROOT, help="repository to clone (default: this one)")
    parser.add_argument("--keep", action="store_true", help="keep the clones and their logs")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="forge-quickstart-"))
    print(f"{datetime.now():%Y-%m-%d %H:%M}, {os.cpu_count()} CPUs, cloning {args.source}; logs in {workdir}")
    print(
        f"{'repeat':>6} {'setup':>12} {'run':>12} {'make run':>12} {'vs 8 min':>9} {'threads':>7}  "
        "load before -> after"
    )
    runs = []
    clone = workdir
    for repeat in range(1, args.repeats + 1):
        clone = workdir / f"clone{repeat}"
        subprocess.run(["git", "clone", "-q", str(args.source), str(clone)], check=True)
        log = workdir / f"clone{repeat}.log"
        before = _load()
        setup = _timed(["make", "setup"], clone, log)
        run = _timed(["make", "run"], clone, log)
        runs.append(run)
        total = setup + run
        print(
            f"{repeat:6d} {_minutes(setup):>12} {_minutes(run):>12} {_minutes(total):>12} "
            f"{total / TARGET_S:9.2f} {_threads(log):>7}  {before} -> {_load()}",
            flush=True,
        )
        print(f"{'':6} {_model_work(clone / 'runs' / 'quickstart')}", flush=True)
    if args.deterministic:
        log = workdir / "deterministic.log"
        before = _load()
        took = _timed(
            ["make", "run", "RUN_DIR=runs/quickstart-deterministic", "RUN_ARGS=--deterministic"], clone, log
        )
        print(
            f"--deterministic run {_minutes(took)} vs {_minutes(runs[-1])} without: "
            f"{took / runs[-1]:.2f}x  {before} -> {_load()}"
        )
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
