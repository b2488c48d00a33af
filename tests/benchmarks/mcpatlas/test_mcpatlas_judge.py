"""MCP-Atlas's claim judge is upstream's: parity with upstream's own scoring script on the same answers
and claims, with one scripted judge answering both (test module `_scripted_judge`).

The reference is `mcp_evals_scores.py` of the pinned tree run as upstream runs it (its command line, in a
subprocess, a stand-in `litellm` answering its model calls); forge-eval's side is the `atlas_scorer` in an
Inspect eval with the scripted judge bound to the role `judge`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    get_model,
    modelapi,
)
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.tool import ToolChoice, ToolInfo

from forge_eval.benchmarks.mcpatlas import atlas_scorer, extract_claims, scores_module, select_tasks
from tests.benchmarks._usage import counted
from tests.benchmarks.mcpatlas import _scripted_judge

REPO = Path(__file__).resolve().parents[3]
TREE_NAME = "scaleapi+mcp-atlas@b290e67"
#: Answers per sample task (by position): unicode quotes and dashes, an empty answer, plain text.
ANSWERS = [
    "Frank Gehry designed it; he was born in Toronto \u2014 \u201cthe\u201d city.",
    "",
    "The average rating is 4.25 and the average age 32.5.",
]
_SEEN: dict[str, int] = {}
_CONFIGS: list[GenerateConfig] = []


@modelapi(name="atlas-scripted-judge")
class ScriptedJudgeAPI(ModelAPI):
    """The scripted judge as an Inspect model: replies from `_scripted_judge.reply`."""

    async def generate(
        self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice, config: GenerateConfig
    ) -> ModelOutput:
        _CONFIGS.append(config)
        text = _scripted_judge.reply(input[-1].text, _SEEN)
        return counted(ModelOutput.from_content(self.model_name, text))


@solver
def answer_with(answers: dict[str, str]):  # type: ignore[no-untyped-def]
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.output = ModelOutput.from_content("scripted-agent", answers[str(state.sample_id)])
        return state

    return solve


_REFERENCE = """
import runpy, sys, types
sys.path.insert(0, {repo!r})
from tests.benchmarks.mcpatlas._scripted_judge import reply
seen = {{}}

async def acompletion(*, model, messages, response_format, temperature, **kwargs):
    text = reply(messages[-1]["content"], seen)
    message = types.SimpleNamespace(content=text)
    return types.SimpleNamespace(choices=[types.SimpleNamespace(message=message)])

sys.modules["litellm"] = types.SimpleNamespace(acompletion=acompletion)
sys.modules["nest_asyncio"] = types.SimpleNamespace(apply=lambda: None)
sys.argv = ["mcp_evals_scores.py", "--input-file", {input!r}, "--model-label", "parity",
            "--output-dir", {out!r}]
runpy.run_path({scores!r}, run_name="__main__")
"""


def _upstream_scores(tree: Path, rows: pd.DataFrame, work: Path) -> pd.DataFrame:
    """Upstream's scoring script on `rows` (its completion-results CSV), as upstream runs it."""
    work.mkdir()
    rows.to_csv(work / "completions.csv", index=False)
    script = _REFERENCE.format(
        repo=str(REPO),
        input=str(work / "completions.csv"),
        out=str(work / "out"),
        scores=str(tree / "services/mcp_eval/mcp_evals_scores.py"),
    )
    env = {**os.environ, "EVAL_LLM_API_KEY": "scripted", "MPLBACKEND": "Agg"}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], cwd=work, env=env, capture_output=True, text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return pd.read_csv(work / "out" / "scored_parity.csv")


@pytest.mark.slow
def test_claim_scores_and_coverage_equal_upstreams_scoring_script(
    upstream_trees: Path, tmp_path: Path
) -> None:
    tree = upstream_trees / TREE_NAME
    tasks = pd.read_csv(tree / "services/mcp_eval/sample_tasks.csv")
    answers = {str(t): ANSWERS[i % len(ANSWERS)] for i, t in enumerate(tasks["TASK"])}
    rows = tasks.assign(script_model_response=[answers[str(t)] for t in tasks["TASK"]])
    reference = _upstream_scores(tree, rows, tmp_path / "upstream").set_index("TASK")

    # every sample task, runnable here or not: the judge does not need its servers
    chosen = select_tasks(str(tree), subset="all")
    samples = list(chosen.samples) + [_sample_of(tree, task_id) for task_id in chosen.skipped]
    [log] = inspect_eval(
        Task(dataset=samples, solver=answer_with(answers), scorer=atlas_scorer()),
        model="mockllm/model",
        model_roles={"judge": get_model("atlas-scripted-judge/parity")},
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success", log.error
    assert len(log.samples or []) == len(reference) == 10
    retried = 0
    for sample in log.samples or []:
        ours = sample.scores["atlas_scorer"]
        theirs = reference.loc[str(sample.id)]
        details = json.loads(theirs["coverage_details_json"])
        assert ours.value == pytest.approx(float(theirs["coverage_score"])), sample.id
        assert ours.metadata["per_claim"] == details["per_claim"], sample.id
        assert ours.metadata["fully_covered_claims"] == theirs["fully_covered_claims"]
        assert ours.metadata["partially_covered_claims"] == theirs["partially_covered_claims"]
        assert ours.answer == answers[str(sample.id)]
        judged = [e for e in sample.events if e.event == "model" and e.role == "judge"]
        retried += len(judged) - len(ours.metadata["claims"])
    assert retried > 0  # some first replies were not JSON: upstream's retry asked again, in both
    scores = [float(v) for v in reference["coverage_score"]]
    assert len(set(scores)) > 2  # the scripted verdicts spread the scores: equality is not trivial
    # upstream's structured output reached the judge as Inspect's response schema
    schema = _CONFIGS[0].response_schema
    assert schema is not None and schema.json_schema.properties is not None
    assert schema.json_schema.properties["coverage_outcome"].enum == [
        "fulfilled", "partially_fulfilled", "not_fulfilled"
    ]
    assert all(c.temperature == 0.0 for c in _CONFIGS)


def _sample_of(tree: Path, task_id: str) -> Sample:
    """A sample for a task this machine cannot run (its servers are missing): the scorer needs only
    its claims and the tree."""
    tasks = pd.read_csv(tree / "services/mcp_eval/sample_tasks.csv").set_index("TASK")
    return Sample(
        id=task_id,
        input="-",
        metadata={"gtfa_claims": tasks.loc[task_id, "GTFA_CLAIMS"], "upstream_tree": str(tree)},
    )


def test_claims_are_upstreams_extraction(upstream_trees: Path) -> None:
    tree = upstream_trees / TREE_NAME
    module = scores_module(tree)
    raw = '["\\u201cA\\u201d is B.", {"claim": "C \\u2014 D."}, "ok", "- E is F"]'
    assert extract_claims(tree, raw) == ['"A" is B.', "C - D.", "E is F"]
    assert extract_claims(tree, raw) == module.extract_claims(raw)
    assert "litellm" not in sys.modules and "nest_asyncio" not in sys.modules  # no shim left behind
