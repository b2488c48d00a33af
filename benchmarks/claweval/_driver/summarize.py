"""Upstream's own score summary of trace folders: `python summarize.py TREE OUT.json FOLDER...`.

Runs in upstream's venv. Each FOLDER holds one run's traces as `claw-eval batch` leaves them; for each,
upstream's `score_summary.analyze_model` (the function its `score_summary.py` calls per model: pass line,
padding of missing or ungraded trials with 0 up to its expected trials) is called, and its result
(without the per-trial paths) is written to OUT.json as a list in FOLDER order.
"""

import json
import sys
from pathlib import Path


def main() -> None:
    tree, out, folders = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]
    sys.path.insert(0, str(tree))
    import score_summary  # upstream's module at the tree's root: only its venv has its imports

    summaries = []
    for folder in folders:
        result = score_summary.analyze_model(Path(folder).name, Path(folder))
        result.pop("task_trials", None)
        result["pass_threshold"] = score_summary.PASS_THRESHOLD
        result["trials"] = score_summary.EXPECTED_TRIALS
        summaries.append(result)
    out.write_text(json.dumps(summaries), encoding="utf-8")


if __name__ == "__main__":
    main()
