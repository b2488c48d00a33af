"""The default credit ablation, timed, and its learning criterion checked.

Runs `forge-eval ablate credit` with no options but `--out` (or reads an ablation that already ran there)
and prints: wall time, CPU time of the command and its workers (so a loaded machine can be read: on an
idle 2-core machine the wall time is about CPU / 2), the idle tail (how long the last run trained alone
after the other worker's last run ended, from the runs' finish times), the load average, the command's
own output, and the criterion the defaults are chosen for: the best variant (highest mean final
held-out success) reaches 80% held-out success in at least 80% of its seeds. A bench, not a test: it
takes minutes.

    .venv/bin/python bench/ablation_learning.py [--out DIR] [--args "--loss-agg token-sum"]
"""

import argparse
import json
import os
import resource
import shlex
import subprocess
import sys
import time
from pathlib import Path

CRITERION = 0.8  # success level, and share of seeds that must reach it


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=Path("runs/ablate-credit-bench"))
    parser.add_argument("--args", default="", help="extra options for the command (default: none)")
    args = parser.parse_args()
    forge_eval = Path(sys.executable).with_name("forge-eval")  # the console script beside this Python
    command = [str(forge_eval), "ablate", "credit", "--out", str(args.out)]
    command += shlex.split(args.args)
    load_before = os.getloadavg()
    print(f"$ {shlex.join(command)}", flush=True)
    print(
        f"load average before: {' '.join(f'{x:.2f}' for x in load_before)} ({os.cpu_count()} CPUs)",
        flush=True,
    )
    started = time.perf_counter()
    finished = subprocess.run(command, check=False)
    wall = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = usage.ru_utime + usage.ru_stime
    load_after = os.getloadavg()
    if finished.returncode != 0:
        sys.exit(f"the command failed with exit status {finished.returncode}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in load_after)}")
    print(
        f"wall {wall / 60:.1f} min; CPU {cpu / 60:.1f} min (command and workers); "
        f"CPU / 2 = {cpu / 120:.1f} min"
    )
    # a run's run.json is written as it ends: with 2 workers, one core idles from the second-to-last end
    ends = sorted(p.stat().st_mtime for p in args.out.glob("runs/*/*/run.json"))
    if len(ends) >= 2:
        print(f"idle tail: the last run trained alone for {ends[-1] - ends[-2]:.0f} s")
    data = json.loads((args.out / "ablation.json").read_text())
    for mode, summary in data["by_loss_agg"].items():
        variants = summary["variants"]
        best = max(variants, key=lambda v: variants[v]["final_success"]["estimate"])
        finals = list(variants[best]["final_success"]["per_seed"].values())
        reached = sum(f >= CRITERION for f in finals)
        verdict = "met" if reached >= CRITERION * len(finals) else "NOT met"
        print(
            f"{mode}: best variant {best} reaches {CRITERION:.0%} held-out success in {reached} of "
            f"{len(finals)} seeds: learning criterion (>= {CRITERION:.0%} of seeds) {verdict}"
        )


if __name__ == "__main__":
    main()
