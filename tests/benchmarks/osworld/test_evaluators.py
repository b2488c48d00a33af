"""OSWorld's checkers come from the pinned tree the task data comes from, never from PyPI's desktop-env."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from pptx import Presentation
from pptx.util import Inches

from forge_eval._errors import ForgeError

#: An Impress task whose options turn off the run-count check (`examine_run_count`: 1.0.2 ignores it).
RUN_COUNT_TASK = "b8adbc24-cef2-4b15-99d5-ecbe7ff445eb"


def test_checkers_and_env_are_the_trees(osworld_root: Path) -> None:
    from forge_eval.benchmarks.osworld._evaluators import desktop_env

    api = desktop_env(osworld_root)
    package = (osworld_root / "desktop_env").resolve()
    for module in (api.metrics, api.getters, sys.modules[api.DesktopEnv.__module__]):
        assert Path(module.__file__).resolve().is_relative_to(package), module.__file__
    # the three checkers desktop-env 1.0.2 lacks (their tasks were skipped with it)
    assert callable(api.metrics.check_play_and_exit)
    assert callable(api.metrics.check_structure_sim_with_threshold)
    assert callable(api.getters.get_chrome_appearance_mode_ui)


def test_a_copy_with_task_data_only_is_refused(osworld_root: Path, tmp_path: Path) -> None:
    from forge_eval.benchmarks.osworld._evaluators import desktop_env

    shutil.copytree(osworld_root / "evaluation_examples", tmp_path / "evaluation_examples")
    with pytest.raises(ForgeError, match="holds OSWorld's task data but not its code"):
        desktop_env(tmp_path)


def _deck(path: Path, runs: list[str]) -> None:
    """One slide whose title is `runs` (the same text, split into that many runs)."""
    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    paragraph = slide.shapes.title.text_frame.paragraphs[0]
    for text in runs:
        paragraph.add_run().text = text
    box = slide.shapes.add_textbox(Inches(1), Inches(2), Inches(4), Inches(1))
    box.text_frame.text = "Shopping online"
    deck.save(str(path))


class _Desktop:
    """Stands in for the desktop's server for the checker: serves the result file, records postconfig."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files
        self.postconfig: list[Any] = []

    def get_file(self, path: str) -> bytes | None:
        return self.files.get(path)

    def setup(self, steps: list[Any], *args: Any) -> bool:
        self.postconfig += steps
        return True


def test_impress_examine_run_count_is_scored_as_the_tree_says(osworld_root: Path, tmp_path: Path) -> None:
    """The result differs from the gold file in its title's run count only: with the task's
    `examine_run_count: false` the tree's compare_pptx_files passes it; with the check on it fails."""
    from forge_eval.benchmarks.osworld import load_tasks, make_env
    from forge_eval.benchmarks.osworld._evaluators import desktop_env

    (task,) = load_tasks(osworld_root, task_ids=RUN_COUNT_TASK)
    assert task.evaluator["options"]["examine_run_count"] is False
    cache = tmp_path / "cache" / task.id
    env = make_env(
        task.raw, tree=osworld_root, host="127.0.0.1", port=9, files_dir=tmp_path / "files", cache_dir=cache
    )
    _deck(cache / task.evaluator["expected"]["dest"], ["Online Shopping"])
    result = tmp_path / "result.pptx"
    _deck(result, ["Online ", "Shopping"])
    desktop = _Desktop({task.evaluator["result"]["path"]: result.read_bytes()})
    env.controller = env.setup_controller = desktop
    assert env.evaluate() == 1
    assert desktop.postconfig == task.evaluator["postconfig"]  # upstream's evaluate ran the save steps
    metric = desktop_env(osworld_root).metrics.compare_pptx_files
    options = {**task.evaluator["options"], "examine_run_count": True}
    assert metric(str(cache / "189_4.pptx"), str(cache / "189_4_Gold.pptx"), **options) == 0
