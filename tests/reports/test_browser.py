"""The report in a real browser (headless Chromium), when one is installed; skipped with the reason otherwise.

Checks what html.parser cannot: that the inline script runs and sorts the task table.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from forge_eval.reports import SectionRegistry, build_report
from tests.reports import _synthetic as syn
from tests.reports._tree import parse

# Debian's headless shell is the lighter binary; the full browser's --headless does the same here.
_NAMES = ("chromium-headless-shell", "chromium", "chromium-browser")
CHROMIUM = next((found for name in _NAMES if (found := shutil.which(name))), None)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no chromium-headless-shell or chromium on PATH: "
    "run `bash scripts/setup.d/50-chromium.sh` (CI does)",
)


def _dump_dom(page: Path, profile: Path) -> str:
    done = subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            f"--user-data-dir={profile}",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_clicking_a_header_sorts_the_task_table(tmp_path: Path) -> None:
    run_dir = syn.write_run(tmp_path / "r")
    report = build_report(run_dir, sections=SectionRegistry(group="forge_eval.tests.none"))
    # Click "Mean score" once (ascending), the way a user would.
    click = (
        "<script>Array.from(document.querySelectorAll('table.tasks th'))"
        ".find(th => th.textContent === 'Mean score').click();</script></body>"
    )
    clicked = tmp_path / "clicked.html"
    clicked.write_text(report.read_text().replace("</body>", click))
    doc = parse(_dump_dom(clicked, tmp_path / "profile"))
    rows = doc.find("table", cls="tasks").find("tbody").find_all("tr")
    means = [float(r.find_all("td")[-2].attrs["data-sort"]) for r in rows]
    assert means == sorted(means) and len(means) == len(syn.TASKS)
    assert [r.find("th").text() for r in rows] != syn.TASKS  # the order really changed
    header = [th for th in doc.find("table", cls="tasks").find_all("th") if th.text() == "Mean score"][0]
    assert header.attrs["aria-sort"] == "ascending"
    assert len(doc.find("svg", **{"data-chart": "heatmap"}).ids_matching(r"heatmap-cell-\d+-\d+")) == 15
