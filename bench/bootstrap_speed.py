"""Speed of the statistics: the vectorized two-level bootstrap side by side with references.

For each size (tasks x seeds, unbalanced: ~15% of cells missing) it times, in CPU seconds
(`time.process_time`, robust to other load on a shared machine):

- `hierarchical_bootstrap` (BCa, `--resamples`) against the same two-level scheme written as a
  Python loop over resamples (timed on a few hundred resamples and scaled), as a ratio;
- with one seed per task, against `scipy.stats.bootstrap` (BCa, same resamples), as a ratio;
- `summarize_trials` on a trials table of that size with `--epochs` epochs (all metrics).

    .venv/bin/python bench/bootstrap_speed.py [--sizes 100x3 500x5] [--resamples 10000] [--epochs 5]
"""

import argparse
import time
from collections.abc import Callable

import numpy as np
import pandas as pd
from scipy import stats

from forge_eval.analysis import hierarchical_bootstrap, summarize_trials


def cpu_seconds(work: Callable[[], object]) -> float:
    start = time.process_time()
    work()
    return time.process_time() - start


def loop_bootstrap(groups: list[np.ndarray], n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    draws = np.empty(n_resamples)
    for b in range(n_resamples):
        picked = rng.integers(0, len(groups), size=len(groups))
        draws[b] = np.concatenate([rng.choice(groups[t], size=groups[t].size) for t in picked]).mean()
    return draws


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["100x3", "500x5"])
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--loop-resamples", type=int, default=300)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    header = ("size", "ours s", "loop s", "loop/ours", "scipy s", "scipy/ours", "summary s")
    print(" ".join(f"{name:>{width}}" for name, width in zip(header, (8, 8, 9, 10, 8, 11, 10), strict=True)))
    for size in args.sizes:
        n_tasks, n_seeds = (int(part) for part in size.split("x"))
        matrix = rng.binomial(4, rng.beta(0.6, 0.9, size=(n_tasks, 1)), size=(n_tasks, n_seeds)) / 4
        matrix[rng.random(matrix.shape) < 0.15] = np.nan
        matrix[:, 0] = np.nan_to_num(matrix[:, 0], nan=0.5)
        ours = cpu_seconds(lambda m=matrix: hierarchical_bootstrap(m, n_resamples=args.resamples))
        groups = [row[~np.isnan(row)] for row in matrix]
        loop = cpu_seconds(lambda g=groups: loop_bootstrap(g, args.loop_resamples, rng))
        loop *= args.resamples / args.loop_resamples
        flat = matrix[:, 0]
        scipy_flat = cpu_seconds(
            lambda f=flat: stats.bootstrap((f,), np.mean, method="BCa", n_resamples=args.resamples, rng=1)
        )
        ours_flat = cpu_seconds(lambda f=flat: hierarchical_bootstrap(f[:, None], n_resamples=args.resamples))
        tasks, seeds, epochs = (a.ravel() for a in np.indices((n_tasks, n_seeds, args.epochs)))
        passed = rng.random(tasks.size) < 0.4
        trials = pd.DataFrame(
            {
                "task_id": tasks,
                "seed": seeds,
                "epoch": epochs + 1,
                "score": passed.astype(float),
                "passed": passed,
            }
        )
        summary = cpu_seconds(
            lambda t=trials: summarize_trials(t, epochs=args.epochs, graded=True, n_resamples=args.resamples)
        )
        print(
            f"{size:>8} {ours:8.3f} {loop:9.2f} {loop / ours:10.0f} {scipy_flat:8.3f} "
            f"{scipy_flat / ours_flat:11.1f} {summary:10.2f}"
        )


if __name__ == "__main__":
    main()
