"""Seconds per GRPO step of the credit ablation: today's defaults beside the previous implementation's.

The previous implementation (commit 5dd21c4) sampled one call at a time (8 rollouts in flight, each call
its own batch-1 decode), took 4 PPO epochs on unmerged per-call rows, and trained 3 variants x 2 seeds of
100 steps of 8 tasks x 4 rollouts. Its sampler is today's with `sampling_batch=1` (one call per decode);
its update ran on per-call rows, which today's code merges into prefix chains, so the "previous" column
is the previous settings on today's code, a lower bound of the previous cost (the README has the previous
code's own figure, 1.65-2.43 s per step on the idle box). Each setting trains one run of each variant for
`--steps` steps in this process, one after the other, one thread; the first evaluation is left out.
CPU seconds (`time.process_time`) are printed beside wall seconds, so a loaded machine can be read.
The third setting is today's defaults with Python's garbage-collector settings (before `collector_tuned`),
whose CPU seconds in collections (`gc.callbacks`) are printed beside the tuned run's.

The default command's time follows from the measured step: runs x (steps x s/step + evaluations) / jobs.

    .venv/bin/python bench/ablation_step.py [--steps 10] [--variants broadcast,masked,terminal]
"""

import argparse
import gc
import os
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from forge_eval.training.ablation import AblationConfig, RunConfig
from forge_eval.training.ablation._run import Run

PREVIOUS = {"sampling_batch": 1, "ppo_epochs": 4, "tasks_per_step": 8, "group_size": 4}


class _CollectorClock:
    """CPU seconds this thread spends in garbage collections, from `gc.callbacks`."""

    def __init__(self) -> None:
        self.seconds, self._start = 0.0, 0.0
        gc.callbacks.append(self._tick)

    def _tick(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._start = time.thread_time()
        else:
            self.seconds += time.thread_time() - self._start


def _measure(
    config: RunConfig, root: Path, clock: _CollectorClock, tune_collector: bool
) -> tuple[float, float, float, float]:
    """(wall s/step, CPU s/step, wall s per held-out evaluation, collector CPU s/step) of one run."""
    out = root / f"{config.variant}-{config.sampling_batch}-{config.ppo_epochs}-{tune_collector}"
    shutil.rmtree(out, ignore_errors=True)
    run = Run(config, out, tune_collector=tune_collector)
    t0, c0, g0 = time.perf_counter(), time.process_time(), clock.seconds
    result = run.execute()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    steps = config.steps
    eval_wall = wall - result["seconds_per_step"] * steps
    shutil.rmtree(out, ignore_errors=True)
    return (
        result["seconds_per_step"],
        cpu / steps,
        eval_wall / len(result["eval"]),
        (clock.seconds - g0) / steps,
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--variants", default="broadcast,masked,terminal")
    args = parser.parse_args()
    defaults = AblationConfig()
    new = defaults.run_configs()[0]
    untuned = "defaults, Python's collector"
    settings = {  # (config, tune_collector)
        "previous (5dd21c4 settings)": (replace(new, **PREVIOUS), False),
        untuned: (new, False),
        "today's defaults": (new, True),
    }
    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    clock = _CollectorClock()
    rows: dict[str, dict[str, tuple[float, float, float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for variant in args.variants.split(","):
            for label, (config, tune) in settings.items():
                run_config = replace(config, variant=variant, steps=args.steps, eval_every=args.steps)
                rows.setdefault(label, {})[variant] = _measure(run_config, Path(tmp), clock, tune)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    print(
        f"{'setting':<30} {'variant':<10} {'rollouts/step':>13} {'s/step':>7} {'CPU s/step':>10} "
        f"{'GC CPU s/step':>13}"
    )
    for label, by_variant in rows.items():
        config = settings[label][0]
        for variant, (wall, cpu, _, collector) in by_variant.items():
            rollouts = config.tasks_per_step * config.group_size
            print(f"{label:<30} {variant:<10} {rollouts:>13} {wall:>7.3f} {cpu:>10.3f} {collector:>13.3f}")
    mean = {
        label: [sum(m[k] for m in by_variant.values()) / len(by_variant) for k in range(4)]
        for label, by_variant in rows.items()
    }
    today = mean["today's defaults"]
    for label in ("previous (5dd21c4 settings)", untuned):
        before = mean[label]
        print(
            f"mean over variants: {label} {before[0]:.3f} s/step ({before[1]:.3f} CPU, "
            f"{before[3]:.3f} in GC), today {today[0]:.3f} s/step ({today[1]:.3f} CPU, {today[3]:.3f} "
            f"in GC): {before[0] / today[0]:.2f}x wall, {before[1] / today[1]:.2f}x CPU"
        )
    # the default command's time from the measured steps: its runs shared by 2 workers, each run its
    # steps and its held-out evaluations
    runs = len(defaults.variants) * defaults.seeds * len(defaults.loss_agg)
    evals = defaults.steps // defaults.eval_every + 1
    for label, per_step in (("wall", today[0]), ("CPU", today[1])):
        per_run = defaults.steps * per_step + evals * today[2]
        print(
            f"default command from {label} s/step: {runs} runs x ({defaults.steps} steps + {evals} "
            f"evaluations) / 2 jobs = about {runs * per_run / 2 / 60:.1f} min"
        )


if __name__ == "__main__":
    main()
