"""Claw-Eval's protocol record: upstream's official `claw-eval batch --sandbox --trials 3` against a run.

Everything that runs a trial is upstream's code from the pinned tree, so most elements name the same
upstream file on both sides (hashed from the tree the run read). What differs, and keeps a run from
being comparable: the tasks that could not run here, the agent's sampling (our proxy passes the client's
temperature but not the config's `extra_body` reasoning setting; a run's reply cap), the judge and user
models when they are not upstream's, the sandbox (bubblewrap, not upstream's Docker image) and the model
path (a recording proxy and an Inspect model between upstream's provider and the endpoint).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from forge_eval.benchmarks._benchmark import RunUsed, task_set
from forge_eval.benchmarks.claweval._data import data_root, load_tasks
from forge_eval.benchmarks.claweval._trial import SPLIT_CONFIGS, USER_ROLE
from forge_eval.benchmarks.claweval._upstream import COMMIT, REPO
from forge_eval.rundir import NotUsed, ProtocolRecord, Upstream, Value, element, sha256_files

SANDBOX_LABELS = {"bwrap": "upstream's sandbox server in bubblewrap", "none": "no sandbox tools"}


def _file(tree: Path, path: str, symbol: str | None = None, value: Any = None) -> Upstream:
    return Upstream.file(tree, repo=REPO, commit=COMMIT, path=path, symbol=symbol, value=value)


def _files(tree: Path, what: str, paths: list[Path]) -> Upstream:
    """Several of upstream's files as one side, hashed together (`sha256_files`)."""
    return Upstream(repo=REPO, commit=COMMIT, path=what, sha256=sha256_files(paths))


def _config(tree: Path, split: str) -> dict[str, Any]:
    return yaml.safe_load((tree / SPLIT_CONFIGS[split]).read_text(encoding="utf-8")) or {}


def _official_model(tree: Path, split: str, section: str) -> str:
    """A model of upstream's config for a split, as the Inspect model string of its OpenRouter endpoint."""
    return f"openrouter/{_config(tree, split)[section]['model_id']}"


def _judges(tree: Path, splits: list[str], run_judge: str | None) -> tuple[Value, Value]:
    """Upstream's judge for each split that ran (each split's config names its own: Gemini 3 Flash for the
    general and multimodal splits, Claude Opus 4.6 for multi-turn) against the run's one judge."""
    official = {split: _official_model(tree, split, "judge") for split in splits}
    ours = dict.fromkeys(splits, run_judge)
    if len(set(official.values())) == 1:
        return Value(value=next(iter(official.values()))), Value(value=run_judge)
    label = ", ".join(f"{split}: {model}" for split, model in official.items())
    return Value(value=official, label=label), Value(value=ours, label=f"{run_judge} for every split")


def _official_sampling(tree: Path) -> Value:
    config = _config(tree, "general")
    value = {"temperature": 0.0, "extra_body": config.get("model", {}).get("extra_body")}
    return Value(value=value, label=f"upstream's provider: temperature 0, extra_body {value['extra_body']}")


def protocol(run: RunUsed) -> ProtocolRecord:
    """Official (upstream's) and this run's side of every protocol element."""
    tree = data_root(run.data_dir)
    tasks = load_tasks(tree)
    ran = set(run.task_ids)
    splits = [split for split in SPLIT_CONFIGS if any(t.split == split and t.task_id in ran for t in tasks)]
    sandbox = run.task_args.get("sandbox", "bwrap")
    graders = [tree / "src/claw_eval/graders", *sorted(tree.glob("tasks/*/grader.py"))]
    ours_sampling = {"temperature": 0.0, **dict(run.overrides)}
    loop = _file(tree, "src/claw_eval/runner/loop.py", "run_task")
    prompt = _file(tree, "src/claw_eval/runner/system_prompt.py", "build_system_prompt")
    bound = run.model_roles.get(USER_ROLE)
    user_model = bound or run.judge_model
    how = f"--model-role {USER_ROLE}" if bound else f"the judge's model: role {USER_ROLE} unbound"
    user = (
        element(
            "user_model",
            Value(value=_official_model(tree, "multi_turn", "user_agent_model")),
            Value(value=user_model, label=f"{user_model} ({how})"),
            note="upstream's runner/user_agent.py with its prompts; its model is the run's",
        )
        if "multi_turn" in splits
        else element("user_model", NotUsed(why="no multi-turn task ran"))
    )
    return ProtocolRecord(
        elements=[
            run.task_set_element(task_set((t.task_id for t in tasks), "all")),
            element("harness", loop, loop if run.harness == "claw-loop" else Value(value=run.harness)),
            element("agent_prompt", prompt),
            element(
                "agent_sampling",
                _official_sampling(tree),
                Value(value=ours_sampling, label=f"temperature 0 (upstream), run: {dict(run.overrides)}"),
                note="the recording proxy passes the client's temperature, not the config's extra_body",
            ),
            element("judge_model", *_judges(tree, splits or ["general"], run.judge_model)),
            element("judge_prompt", _file(tree, "src/claw_eval/graders/llm_judge.py", "LLMJudge")),
            user,
            element("grader", _files(tree, "tasks/*/grader.py + src/claw_eval/graders", graders)),
            element(
                "environment",
                _files(tree, "mock_services", [tree / "mock_services"]),
                name="environment: mock services",
            ),
            element(
                "environment",
                Value(value="docker", label="upstream's Docker image (Dockerfile.agent) per trial"),
                Value(value=sandbox, label=SANDBOX_LABELS[sandbox]),
                name="environment: sandbox",
                note="bubblewrap: the host's tools, no Playwright browser, no network for Download; "
                "upstream's server runs unchanged, not dumpable, reached only by the run's own processes; "
                "the agent's leftover processes are ended before the grader-only files are pushed "
                "(upstream's container keeps them)",
            ),
            element(
                "environment",
                Value(value="direct", label="upstream's provider calls the endpoint"),
                Value(value="proxy", label="recording proxy -> Inspect model -> endpoint"),
                name="environment: model path",
            ),
            element("data", _files(tree, "tasks", [tree / "tasks"])),
        ]
    )
