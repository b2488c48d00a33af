"""Every upstream tree a run reads is checked against its pinned commit's manifest (forge_eval.upstream)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from forge_eval._errors import UsageError
from forge_eval.benchmarks import BENCHMARKS, RunUsed
from forge_eval.benchmarks.claweval._upstream import COMMIT, REPO
from forge_eval.rundir import ProtocolRecord
from forge_eval.runner import RunSpec, plan_run
from forge_eval.runner._execute import _with_trees
from forge_eval.upstream import MANIFESTS, blob_id, check_tree, manifest, trees_read
from tests.conftest import BENCHMARK_DATA, UPSTREAM_TREES, shared_copy

TASK = "T002_email_triage"
OTHER = "T020_inventory_check"


def _redacted(tree: Path) -> set[str]:
    """The files the shared snapshots list as redacted (their own REDACTED.txt, not our code)."""
    listing = tree.parent / "REDACTED.txt"
    lines = listing.read_text().splitlines()[1:] if listing.exists() else []
    return {line.split("/", 1)[1] for line in lines if line.startswith(tree.name + "/")}


def test_the_blob_id_is_gits(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"caf\xc3\xa9\n\x00binary")
    git = subprocess.run(["git", "hash-object", str(path)], capture_output=True, text=True, check=True)
    assert blob_id(path) == git.stdout.strip()


@pytest.mark.parametrize("name", sorted(p.stem for p in MANIFESTS.glob("*.tsv")))
def test_each_shared_snapshot_differs_from_its_commit_only_where_it_says_it_was_redacted(name: str) -> None:
    repo, commit = name.split("@")
    folder = next(UPSTREAM_TREES.glob(f"{repo}@{commit[:7]}"), None)
    if folder is None:
        pytest.skip(f"no snapshot of {repo}@{commit[:7]} under {UPSTREAM_TREES}")
    check = check_tree(folder, repo.replace("+", "/"), commit)
    assert check.prefix == "" and set(check.modified) == _redacted(folder)
    assert len(manifest(repo.replace("+", "/"), commit[:7])) > len(check.missing)


@pytest.fixture(scope="module")
def edited_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the pinned Claw-Eval tree with one task's grader edited."""
    source = shared_copy(UPSTREAM_TREES / "claw-eval+claw-eval@9365e1a", "the pinned Claw-Eval tree")
    tree = tmp_path_factory.mktemp("claweval") / "claw-eval"
    shutil.copytree(source, tree)
    grader = tree / "tasks" / TASK / "grader.py"
    grader.write_text(grader.read_text() + "\n# always pass\n")
    return tree


def _spec(tree: Path, task: str, tmp_path: Path, **changes) -> RunSpec:
    options = {"task_ids": task, "sandbox": "none"}
    return RunSpec(
        benchmark="claweval",
        seeds=(0,),
        out=tmp_path / "run",
        judge="qwen-0.5b",
        data_dir=tree,
        task_options=options,
        **changes,
    )


def test_a_tree_with_an_edited_grader_is_refused_for_that_task(edited_tree: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError) as refused:
        plan_run(_spec(edited_tree, TASK, tmp_path))
    assert f"tasks/{TASK}/grader.py (modified)" in str(refused.value)
    assert "--allow-modified-tree" in refused.value.hint and not (tmp_path / "run").exists()
    # another task of the same tree reads none of the edited files
    assert plan_run(_spec(edited_tree, OTHER, tmp_path)).trees


def test_with_the_flag_the_record_names_the_files_and_the_run_is_not_comparable(
    edited_tree: Path, tmp_path: Path
) -> None:
    plan = plan_run(_spec(edited_tree, TASK, tmp_path, allow_modified_tree=True))
    record = _with_trees(ProtocolRecord(elements=[]), list(plan.trees), (TASK,))
    (tree,) = record.elements
    assert not tree.matches and record.comparable is False
    assert tree.ours.value["changed"] == [f"tasks/{TASK}/grader.py"]
    assert tree.official.value == f"{REPO}@{COMMIT[:12]}"
    clean = _with_trees(ProtocolRecord(elements=[]), list(plan.trees), (OTHER,))
    assert clean.elements[0].matches


def test_bytecode_caches_are_not_changes(edited_tree: Path, tmp_path: Path) -> None:
    """A checkout where upstream's code ran holds `__pycache__` folders: they do not refuse the tree."""
    tree = tmp_path / "cached"
    shutil.copytree(edited_tree, tree)
    (tree / "src/claw_eval/__pycache__").mkdir(exist_ok=True)
    (tree / "src/claw_eval/__pycache__/cli.cpython-311.pyc").write_bytes(b"\x00")
    assert plan_run(_spec(tree, OTHER, tmp_path)).trees


def test_a_planted_module_outside_the_tasks_is_refused_for_every_task(
    edited_tree: Path, tmp_path: Path
) -> None:
    tree = tmp_path / "planted"
    shutil.copytree(edited_tree, tree)
    (tree / "src/claw_eval/graders/sitecustomize.py").write_text("print('hi')\n")
    with pytest.raises(UsageError, match=r"src/claw_eval/graders/sitecustomize.py \(added\)"):
        plan_run(_spec(tree, OTHER, tmp_path))


def _data_dirs() -> list[Path]:
    """Where the shared copies are: the upstream snapshots, then each benchmark's data folder."""
    return [UPSTREAM_TREES, *sorted(UPSTREAM_TREES.glob("*@*")), *sorted(BENCHMARK_DATA.glob("*/*"))]


@pytest.mark.parametrize("name", [n for n in BENCHMARKS.names() if BENCHMARKS.get(n).accepts_data_dir])
def test_every_benchmark_that_reads_upstream_data_checks_its_tree(name: str) -> None:
    entry = BENCHMARKS.get(name)
    for data_dir in _data_dirs():
        try:
            with trees_read() as trees:
                entry.selection(data_dir)
        except Exception:  # noqa: BLE001 - not this benchmark's copy: try the next one
            continue
        assert trees, f"{name} read {data_dir} without checking it against its pinned commit"
        return
    pytest.skip(f"no shared copy of {name}'s data under {_data_dirs()[:2]}")


def test_a_run_used_on_the_pinned_tree_records_it_as_the_official_one(tmp_path: Path) -> None:
    tree = shared_copy(UPSTREAM_TREES / "claw-eval+claw-eval@9365e1a", "the pinned Claw-Eval tree")
    plan = plan_run(_spec(tree, OTHER, tmp_path))
    used = RunUsed(harness="claw-loop", task_ids=(OTHER,), data_dir=tree)
    record = _with_trees(ProtocolRecord(elements=[]), list(plan.trees), used.task_ids)
    assert all(e.matches for e in record.elements) and "partial copy" in (record.elements[0].note or "")
