"""`analyze_run`: a run directory -> `DIR/behavior.json` (and the report's Behavior section)."""

from pathlib import Path
from typing import Any

from forge_eval.analysis._bootstrap import N_RESAMPLES, RANDOM_STATE
from forge_eval.analysis.behavior._summary import compare_behavior, summarize_behavior
from forge_eval.analysis.behavior._transcripts import read_run_transcripts
from forge_eval.rundir import RunDir, json_safe, write_json


def _run_info(run_dir: Path) -> dict[str, Any]:
    results = RunDir(run_dir).read_json(RunDir.RESULTS) or {}
    return {k: results.get(k) for k in ("benchmark", "model", "harness", "seeds", "epochs")}


def analyze_run(
    run_dir: str | Path,
    compare: str | Path | None = None,
    *,
    n_resamples: int = N_RESAMPLES,
    random_state: int = RANDOM_STATE,
) -> dict[str, Any]:
    """Measure the behavior of a run and write it to `run_dir/behavior.json`.

    Args:
        run_dir: A `forge-eval run --out` directory (logs/, results.json, trials.csv).
        compare: Another run of the same tasks and seeds: adds paired differences run_dir − compare.
        n_resamples: Bootstrap resamples per interval.
        random_state: Bootstrap seed (the same seed gives the same intervals).

    Returns:
        What was written to behavior.json.
    """
    run_dir = Path(run_dir)
    this = read_run_transcripts(run_dir)
    other = read_run_transcripts(compare) if compare is not None else None  # bad input fails early
    data: dict[str, Any] = {
        "run_dir": str(run_dir),
        **_run_info(run_dir),
        **summarize_behavior(this, n_resamples=n_resamples, random_state=random_state),
    }
    if compare is not None and other is not None:
        data["comparison"] = {
            "compared_run": str(compare),
            **_run_info(Path(compare)),
            **compare_behavior(this, other, n_resamples=n_resamples, random_state=random_state),
        }
    data = json_safe(data)
    write_json(RunDir(run_dir).behavior, data, indent=1)
    return data
