"""Claw-Eval: the task list read from the pinned upstream tree, the census of what runs here, bad input."""

from __future__ import annotations

import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample

from forge_eval._errors import ForgeError, UsageError
from forge_eval.benchmarks import BENCHMARKS, NothingRunnableError
from forge_eval.benchmarks._acquire import locate_data
from forge_eval.benchmarks._benchmark import RunUsed
from forge_eval.benchmarks.claweval import (
    OFFICIAL_JUDGE,
    SOURCE,
    claweval,
    data_root,
    load_task,
    load_tasks,
    skip_reason,
)
from forge_eval.benchmarks.claweval._trial import driver_env
from forge_eval.harnesses import HARNESSES
from forge_eval.runner import RunSpec, plan_run


def test_all_300_tasks_parse_with_the_published_counts(claweval_tree: Path) -> None:
    tasks = load_tasks(data_root(claweval_tree))
    assert len(tasks) == 300
    assert Counter(t.split for t in tasks) == {"general": 161, "multimodal": 101, "multi_turn": 38}
    assert Counter(t.language for t in tasks) == {"en": 179, "zh": 121}
    timeouts = Counter(t.environment.timeout_seconds for t in tasks)
    assert (timeouts[600], timeouts[300], timeouts[900], timeouts[1800]) == (151, 67, 51, 14)


def test_census_of_runnable_and_skipped_tasks(claweval_tree: Path) -> None:
    """The census the README states: every task runs or is skipped with one of the named reasons."""
    root = data_root(claweval_tree)
    kinds: Counter[tuple[str, str]] = Counter()
    for task in load_tasks(root):
        reason = skip_reason(root, task) or "runs"
        kind = reason.split(" ", 1)[0] if reason == "runs" else reason.split(":")[0].split("(")[0].strip()
        kinds[(task.split, kind)] += 1
    print("\nClaw-Eval census on the shared tree (split, outcome): count")
    for (split, kind), n in sorted(kinds.items()):
        print(f"  {split:10} {kind:80} {n}")
    runs = sum(n for (_, kind), n in kinds.items() if kind == "runs")
    live = sum(n for (_, kind), n in kinds.items() if kind.startswith("needs the live web"))
    missing = sum(n for (_, kind), n in kinds.items() if kind.startswith("files of the task"))
    images = sum(n for (_, kind), n in kinds.items() if kind.startswith("multimodal"))
    assert (runs, live, missing, images) == (128, 63, 17, 92)
    skipped = BENCHMARKS.get("claweval").skipped(claweval_tree)
    assert len(skipped) == 300 - runs and all(skipped.values())
    # without the sandbox (`batch` without --sandbox), the tasks that need its tools are skipped too
    without = BENCHMARKS.get("claweval").skipped(claweval_tree, sandbox="none")
    extra = {t: r for t, r in without.items() if t not in skipped}
    assert len(extra) == 11 and all("sandbox tools" in r for r in extra.values())
    assert "T100_reverse_decoder" in extra and "C01zh_mortgage_prepay" in extra


def test_live_web_tasks_run_with_the_users_serp_key_which_only_the_driver_gets(
    claweval_tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Upstream runs its live-web tasks with SERP_DEV_KEY exported; so does forge-eval, and the key reaches
    the driver (whose mock services inherit it), not the sandbox."""
    monkeypatch.delenv("SERP_DEV_KEY", raising=False)
    without = BENCHMARKS.get("claweval").skipped(claweval_tree)
    live = {t for t, r in without.items() if r.startswith("needs the live web")}
    assert len(live) == 63 and all("export SERP_DEV_KEY" in without[t] for t in live)
    assert "SERP_DEV_KEY" not in driver_env(claweval_tree, tmp_path)
    monkeypatch.setenv("SERP_DEV_KEY", "k")
    with_key = BENCHMARKS.get("claweval").skipped(claweval_tree)
    assert not any(r.startswith("needs the live web") for r in with_key.values())
    assert set(without) - set(with_key) <= live and len(set(without) - set(with_key)) > 0
    assert driver_env(claweval_tree, tmp_path)["SERP_DEV_KEY"] == "k"


def test_upstreams_code_run_by_the_driver_leaves_its_tree_as_pinned(
    claweval_tree: Path, claweval_python: Path, tmp_path: Path
) -> None:
    """The driver imports `claw_eval` from the tree: bytecode written there would be code added to the tree,
    and the next run's manifest check would refuse it."""
    tree = tmp_path / "tree"
    shutil.copytree(claweval_tree / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__"))
    program = "import claw_eval.runner.loop, claw_eval.cli"
    done = subprocess.run(
        [str(claweval_python), "-c", program], cwd=tree, env=driver_env(tree, tmp_path), capture_output=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert not list(tree.rglob("__pycache__"))


def test_data_dir_accepts_the_tree_and_a_folder_holding_it(claweval_tree: Path, tmp_path: Path) -> None:
    assert data_root(claweval_tree) == data_root(claweval_tree.parent) == claweval_tree
    with pytest.raises(UsageError, match="holds no claweval data"):
        data_root(tmp_path)


def test_offline_without_the_tree_says_where_to_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORGE_CACHE_DIR", str(tmp_path))

    def offline(source: Any, target: Path) -> None:
        raise httpx.ConnectError("no network")

    with pytest.raises(ForgeError) as caught:
        locate_data(SOURCE, None, download=offline)
    text = str(caught.value)
    assert "could not be downloaded" in text and "github.com/claw-eval/claw-eval" in text
    assert SOURCE.revision[:12] in text and "--data-dir" in text


def test_bad_task_file_names_file_and_field(tmp_path: Path) -> None:
    path = tmp_path / "task.yaml"
    path.write_text("task_id: X1\ncategory: c\nprompt: {text: hi}\nservices: [{name: gmail, port: -1}]\n")
    with pytest.raises(ForgeError, match=r"task\.yaml: field 'services\.0\.port'"):
        load_task(path)


def test_an_unknown_sandbox_lists_the_valid_ones(claweval_tree: Path) -> None:
    with pytest.raises(UsageError, match="unknown Claw-Eval sandbox 'docker'; valid: bwrap, none"):
        claweval(task_ids="T002_email_triage", data_dir=str(claweval_tree), sandbox="docker")


def test_only_upstreams_loop_runs_claweval(claweval_tree: Path) -> None:
    with pytest.raises(ForgeError, match="upstream's own loop") as raised:
        claweval(task_ids="T002_email_triage", data_dir=str(claweval_tree), harness="react")
    assert "--harness claw-loop" in (raised.value.hint or "")


def _copy_with_a_multimodal_task(tree: Path, root: Path) -> Path:
    """A tree with two live-web multimodal tasks and a mail task renamed into the multimodal split."""
    (root / "tasks").mkdir(parents=True)
    for name in ("M021_doc_reference_verification", "M023_video_paper_understanding", "T002_email_triage"):
        shutil.copytree(tree / "tasks" / name, root / "tasks" / name)
    (root / "src/claw_eval/runner").mkdir(parents=True)
    (root / "src/claw_eval/runner/loop.py").write_text("")
    mail = root / "tasks" / "M901_mail"
    (root / "tasks" / "T002_email_triage").rename(mail)
    text = (mail / "task.yaml").read_text().replace("T002_email_triage", "M901_mail")
    (mail / "task.yaml").write_text(text)
    return root


def test_the_run_counts_the_tasks_of_its_own_subset(claweval_tree: Path, tmp_path: Path) -> None:
    root = _copy_with_a_multimodal_task(claweval_tree, tmp_path / "claw")
    options = {"subset": "multimodal", "images": True}
    spec = RunSpec(
        benchmark="claweval", seeds=(0,), out=tmp_path / "run", judge="qwen-0.5b", data_dir=root,
        task_options=options, allow_modified_tree=True,  # a task made up from another one's files
    )
    plan = plan_run(spec)
    assert plan.n_total == 3
    assert set(plan.skipped) == {"M021_doc_reference_verification", "M023_video_paper_understanding"}
    bench = BENCHMARKS.get("claweval")
    assert [s.id for s in bench.load(root, **options)] == ["M901_mail"]
    assert bench.skipped(root, **options) == plan.skipped
    assert "images=true" in bench.skipped(root, subset="multimodal")["M901_mail"]


def test_a_subset_with_nothing_runnable_here_stops_the_run_with_every_reason(
    claweval_tree: Path, tmp_path: Path
) -> None:
    spec = RunSpec(
        benchmark="claweval", seeds=(0,), out=tmp_path / "run", judge="qwen-0.5b", data_dir=claweval_tree,
        task_options={"subset": "multimodal"},
    )
    with pytest.raises(NothingRunnableError) as raised:
        plan_run(spec)
    assert raised.value.exit_code == 2 and len(raised.value.skipped) == 101
    assert not (tmp_path / "run").exists()


def test_protocol_record_names_what_differs_from_upstreams_official_command(claweval_tree: Path) -> None:
    entry = BENCHMARKS.get("claweval")
    runnable = tuple(sorted(str(s.id) for s in entry.load(claweval_tree)))
    run = RunUsed(
        harness="claw-loop", task_args={"sandbox": "bwrap"}, judge_model=OFFICIAL_JUDGE,
        task_ids=runnable, data_dir=claweval_tree,
    )
    record = entry.protocol(run)
    assert record.comparable is False and record.pending is None
    differing = {e.name for e in record.elements if not e.matches}
    # the 3 multi-turn tasks that ran bring upstream's user model in (Claude Opus 4.6; here the judge's),
    # and their split's own judge (config_user_agent.yaml: Claude Opus 4.6, not the general split's Gemini)
    assert differing == {
        "task set and subset", "agent sampling settings", "environment: sandbox", "environment: model path",
        "simulated-user model", "judge model",
    }
    (judge,) = record.of("judge_model")
    assert judge.official.value == {
        "general": OFFICIAL_JUDGE, "multi_turn": "openrouter/anthropic/claude-opus-4.6"
    }
    assert judge.ours.value == {"general": OFFICIAL_JUDGE, "multi_turn": OFFICIAL_JUDGE}
    same = {e.element for e in record.elements if e.matches}
    assert {"harness", "agent_prompt", "judge_prompt", "grader", "data"} <= same
    # the general split alone, judged by upstream's Gemini, matches
    general = tuple(t for t in runnable if t.startswith("T"))
    (judge,) = entry.protocol(RunUsed(
        harness="claw-loop", judge_model=OFFICIAL_JUDGE, task_ids=general, data_dir=claweval_tree,
    )).of("judge_model")
    assert judge.matches and judge.official.value == OFFICIAL_JUDGE
    prompt = record.of("agent_prompt")[0].official
    assert prompt.path == "src/claw_eval/runner/system_prompt.py" and prompt.commit.startswith("9365e1a")
    # with the embedded model as judge, the judge model differs too; a multi-turn task brings the user in
    smoke = entry.protocol(RunUsed(
        harness="claw-loop", judge_model="qwen-0.5b", task_ids=("C01zh_mortgage_prepay",),
        data_dir=claweval_tree,
    ))
    assert {"judge model", "simulated-user model"} <= {e.name for e in smoke.elements if not e.matches}
    # the user role bound to its own model (`--model-role user=...`) is what the record names
    (user,) = entry.protocol(RunUsed(
        harness="claw-loop", judge_model="qwen-0.5b", model_roles={"user": "openai/gpt-4.1"},
        task_ids=("C01zh_mortgage_prepay",), data_dir=claweval_tree,
    )).of("user_model")
    assert user.ours.value == "openai/gpt-4.1" and "--model-role user" in user.ours.label


def test_claw_loop_runs_only_claweval(tmp_path: Path) -> None:
    """claw-loop is upstream's runner inside a Claw-Eval trial: another benchmark's sample fails in it
    with the reason, before any model call."""
    solver = HARNESSES.get("claw-loop").solver(tools=[], system_prompt="")
    task = Task(dataset=[Sample(input="hi")], solver=solver)
    (log,) = inspect_eval(task, model="mockllm/model", display="none", log_dir=str(tmp_path))
    assert log.status == "error" and "runs only the claweval benchmark" in str(log.error)
