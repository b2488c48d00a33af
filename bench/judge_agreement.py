"""How often an LLM judge agrees with weblab's ground truth (judge-vs-verifier agreement).

Each selected weblab task is played twice by its scripted oracle through the real browser: solved, and a
plausible failure (a wrong answer, or an action left undone while reporting "Done."). The verifier gives
the truth; the judge (Inspect role "judge", default: the run's model) gives its verdict, with the official
judge prompts: upstream's own code, read from the pinned trees (`--upstream-dir`, else the cache, else
downloaded). Prints accuracy,
false-success rate and Cohen's kappa with 95% intervals (the module docstring of
`forge_eval.benchmarks.weblab._agreement` says how each is made). Not a speed benchmark: a measurement that
nobody publishes for web judges, kept here beside the other measured figures.

    .venv/bin/python bench/judge_agreement.py [--judge webvoyager|webjudge] [--tasks 12 | --task-ids A,B]
        [--model M] [--upstream-dir ../shared/upstream]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time

from inspect_ai import eval as inspect_eval

from forge_eval.benchmarks.weblab import TASKS, agreement_from_log, agreement_task
from forge_eval.runner._model import resolved_model

SCORERS = {"webvoyager": "webvoyager_judge", "webjudge": "webjudge"}


def spread(n: int) -> str:
    """n task ids spread over sites and kinds (round robin over sites, alternating info/action)."""
    by_site: dict[str, list[str]] = {}
    for t in sorted(TASKS, key=lambda t: (t.kind != "action", t.id)):
        by_site.setdefault(t.site, []).append(t.id)
    chosen: list[str] = []
    while len(chosen) < n and any(by_site.values()):
        for ids in by_site.values():
            if ids and len(chosen) < n:
                chosen.append(ids.pop(len(ids) // 2 if len(chosen) % 2 else 0))
    return ",".join(chosen)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judge", choices=sorted(SCORERS), default="webvoyager")
    parser.add_argument("--tasks", type=int, default=12, help="how many tasks, spread over sites and kinds")
    parser.add_argument("--task-ids", default=None, help="these weblab tasks instead (comma-separated)")
    parser.add_argument("--model", default=None, help="judge model (default: the embedded model)")
    parser.add_argument("--upstream-dir", default=None, help="folder of the pinned upstream trees")
    parser.add_argument("--log-dir", default=None, help="keep the Inspect log here (default: discarded)")
    args = parser.parse_args()
    ids = args.task_ids or spread(args.tasks)
    start = time.perf_counter()
    with resolved_model(args.model) as model, tempfile.TemporaryDirectory() as logs:
        (log,) = inspect_eval(
            agreement_task(args.judge, task_ids=ids, upstream_dir=args.upstream_dir),
            model=model.inspect_model,
            model_base_url=model.base_url,
            model_args=model.model_args,
            max_connections=2,
            log_dir=args.log_dir or logs,
            display="none",
        )
        # Inspect reads a log's samples lazily: read them before the temporary log folder goes.
        agreement = agreement_from_log(log, SCORERS[args.judge])
        errors = [s.id for s in log.samples or [] if s.error]
    print(
        f"judge {args.judge} ({model.label}), {agreement.n} trajectories of {len(ids.split(','))} tasks, "
        f"{time.perf_counter() - start:.0f} s" + (f"; samples with an error: {errors}" if errors else "")
    )
    print(json.dumps(agreement.to_dict(), indent=2))


if __name__ == "__main__":
    main()
