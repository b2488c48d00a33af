"""Build `DIR/report.html` from a run directory."""

from __future__ import annotations

import os
from pathlib import Path

from forge_eval import __version__
from forge_eval._errors import ForgeError
from forge_eval.reports import _core, _noise
from forge_eval.reports._matrix import harness_matrix
from forge_eval.reports._page import page
from forge_eval.reports._sections import REPORT_SECTIONS, SectionRegistry, render_extra_sections
from forge_eval.reports._trials import summarise
from forge_eval.rundir import RunDir, load_results, read_trials, write_text


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
    files = RunDir(run_dir)
    results = load_results(files.path)
    outcomes = summarise(read_trials(files.trials), results.seeds) if files.trials.is_file() else None
    matrix = harness_matrix(results)
    core = [
        _core.headline(results, outcomes),
        *([matrix] if matrix is not None else []),
        _core.protocol(results),
        _core.seed_estimates(results),
        _noise.noise_floor(results),
        _noise.cost(results),
        _core.heatmap(outcomes),
        _core.task_table(outcomes),
        _core.metadata(results),
        _core.logs(results),
    ]
    document = page(results, core + render_extra_sections(files.path, sections), f"forge-eval {__version__}")
    target = files.report
    try:
        write_text(target, document)  # atomic: an interrupted rebuild never leaves a truncated report
    except OSError as e:
        raise ForgeError(
            f"cannot write {target}: {e.strerror or e}",
            "make the run directory writable, or copy it somewhere writable and run "
            "`forge-eval report` on the copy",
        ) from None
    return target
