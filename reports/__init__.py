"""Reports: the self-contained HTML report of a run.

`build_report(run_dir)` reads `results.json` and `trials.csv` from a run directory written by
`forge-eval run` (the contract: `forge_eval.rundir`) and writes `run_dir/report.html`: one file with
inline CSS, inline SVG charts (matplotlib) and a few lines of inline script, which opens offline.
`forge-eval report DIR` rebuilds it. `build_ablation_report(out)` renders a credit ablation's folder
(`forge-eval ablate credit`) the same way.

Adding a section
----------------
Other packages add sections without touching this one. A section is a callable
`(run_dir: Path) -> Section | None`; it returns `None` when it has nothing to show (for example when
its input file is absent). Registered sections are rendered after the built-in ones, in registration
order; one that raises is shown as a warning instead of breaking the report. `Section.html` is
inserted as is, so escape all data in it (`html.escape`) and reference no remote resource; for a
chart, `svg_figure` turns a matplotlib drawing function into inline SVG in the report's style::

    import html
    from pathlib import Path
    from forge_eval.reports import REPORT_SECTIONS, Section
    from forge_eval.rundir import RunDir

    @REPORT_SECTIONS.register("behavior")
    def behavior_section(run_dir: Path) -> Section | None:
        data = RunDir(run_dir).read_json(RunDir.BEHAVIOR)
        if data is None:
            return None
        rows = "".join(f"<tr><td>{html.escape(k)}</td><td>{v:.1%}</td></tr>" for k, v in data.items())
        return Section("Behavior", f"<table>{rows}</table>")

Registering in code only takes effect once that module is imported. So that `forge-eval report`
(which imports nothing but this package) also finds the section, advertise it as an entry point in
pyproject.toml (then re-install: `.venv/bin/pip install -q -e '.[dev]'`)::

    [project.entry-points."forge_eval.report_sections"]
    behavior = "forge_eval.analysis.behavior:behavior_section"

Entry points are loaded on first use of the registry, after the sections registered in code.
"""

from forge_eval.reports._ablation import build_ablation_report
from forge_eval.reports._build import build_report
from forge_eval.reports._compare import build_compare_report
from forge_eval.reports._sections import REPORT_SECTIONS, Section, SectionFn, SectionRegistry
from forge_eval.reports._svg import svg_figure

__all__ = [
    "build_ablation_report",
    "build_compare_report",
    "REPORT_SECTIONS",
    "Section",
    "SectionFn",
    "SectionRegistry",
    "build_report",
    "svg_figure",
]
