"""Build `DIR/report.html` from a run directory."""

from __future__ import annotations

import os
from pathlib import Path

from forge_eval import __version__
from forge_eval._errors import ForgeError
from forge_eval.reports import _core
from forge_eval.reports._page import page
from forge_eval.reports._results import load_results
from forge_eval.reports._sections import REPORT_SECTIONS, SectionRegistry, render_extra_sections
from forge_eval.reports._trials import TRIALS_FILE, load_trials, summarise

REPORT_FILE = "report.html"


def build_report(run_dir: str | os.PathLike[str], *, sections: SectionRegistry = REPORT_SECTIONS) -> Path:
    """Render the run in `run_dir` as one self-contained HTML file, `run_dir/report.html`.

    Args:
        run_dir: A directory written by `forge-eval run` (results.json, trials.csv, logs/).
        sections: Where the extra sections come from (default: `REPORT_SECTIONS`).

    Returns:
        The path of the written report.

    Raises:
        ForgeError: results.json is missing or invalid, trials.csv is malformed, or the report
            cannot be written.
    """
    run_dir = Path(run_dir)
    results = load_results(run_dir)
    trials_path = run_dir / TRIALS_FILE
    outcomes = summarise(load_trials(trials_path), results.seeds) if trials_path.is_file() else None
    core = [
        _core.headline(results, outcomes),
        _core.seed_estimates(results),
        _core.heatmap(outcomes),
        _core.task_table(outcomes),
        _core.metadata(results),
        _core.logs(results),
    ]
    document = page(results, core + render_extra_sections(run_dir, sections), f"forge-eval {__version__}")
    target = run_dir / REPORT_FILE
    # Write then rename, so an interrupted rebuild never leaves a truncated report behind.
    partial = target.with_name(f".{REPORT_FILE}.tmp")
    try:
        partial.write_text(document, encoding="utf-8")
        partial.replace(target)
    except OSError as e:
        partial.unlink(missing_ok=True)
        raise ForgeError(
            f"cannot write {target}: {e.strerror or e}",
            "make the run directory writable, or copy it somewhere writable and run "
            "`forge-eval report` on the copy",
        ) from None
    return target
