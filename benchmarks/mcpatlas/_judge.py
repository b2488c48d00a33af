"""The claim judge: upstream's `mcp_evals_scores.py` (claim extraction, prompt, structured output, retries,
coverage), run from the pinned tree with its model call bound to the Inspect role `judge`.

Upstream's `CoverageEvaluator` sends one `litellm.acompletion` per claim: upstream's prompt
(`_get_single_claim_evaluation_prompt`), `response_format` with upstream's JSON schema, temperature 0,
retried by upstream's `tenacity` decorator (6 attempts, random exponential wait of 1-60 s), at most 5
claims at a time (its `--concurrency` default) with its 0.2 s pause after each. Here that call goes to the
judge model through Inspect (the schema as Inspect's `response_schema`), so `--judge` chooses the model
and every judge call is an Inspect `ModelEvent`. The API key upstream reads from `EVAL_LLM_API_KEY` is
not needed (Inspect holds the model's credentials). Everything else is upstream's code as it is.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

from inspect_ai.model import GenerateConfig, Model, ResponseSchema, get_model, messages_from_openai
from inspect_ai.util import JSONSchema

from forge_eval.benchmarks._judge import JUDGE_ROLE, JudgeSetup
from forge_eval.rundir import Upstream
from forge_eval.upstream import ATLAS_SCORES_FILE, atlas_import_file, atlas_litellm_shim, atlas_private_name

OFFICIAL_JUDGE = "google/gemini-2.5-pro"
#: Upstream's scoring defaults (its command line): claims judged at once, pause after each call.
CONCURRENCY = 5
JUDGE = JudgeSetup(
    prompts=(),
    origin="upstream's CoverageEvaluator._get_single_claim_evaluation_prompt, read from the pinned tree",
    temperature=0.0,
    settings={
        "calls": "one per claim (upstream's CoverageEvaluator)",
        "response_format": "json_object with upstream's single-claim schema",
        "retries": "upstream's tenacity: 6 attempts, random exponential wait 1-60 s",
        "concurrency": CONCURRENCY,
    },
)
_JUDGE_MODEL: ContextVar[Model] = ContextVar("mcpatlas_judge_model")


async def _acompletion(
    *, model: str, messages: list[dict[str, Any]], response_format: dict[str, Any] | None = None,
    temperature: float | None = None, **_: Any,
) -> Any:
    """litellm's call as upstream's judge makes it, answered by the judge model of this context."""
    schema = (response_format or {}).get("response_schema")
    config = GenerateConfig(
        temperature=temperature,
        response_schema=ResponseSchema(name="single_claim_evaluation", json_schema=JSONSchema(**schema))
        if schema
        else None,
    )
    output = await _JUDGE_MODEL.get().generate(await messages_from_openai(messages), config=config)  # type: ignore[arg-type]
    if output.error:
        raise RuntimeError(output.error)
    return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=output.completion))])


@cache
def scores_module(tree: Path) -> ModuleType:
    """Upstream's `mcp_evals_scores.py` of `tree`, imported once per tree."""
    name = atlas_private_name(tree, "mcp_evals_scores")
    module = atlas_import_file(tree, ATLAS_SCORES_FILE, name, atlas_litellm_shim(_acompletion))
    # upstream's client reads an API key from the environment; the judge is reached through Inspect
    module.get_litellm_config = lambda: ("inspect-model-role-judge", "")
    return module


def extract_claims(tree: Path, raw: Any) -> list[str]:
    """Upstream's `extract_claims` (its claim splitting and cleaning) of one GTFA_CLAIMS value."""
    return list(scores_module(tree).extract_claims(raw))


def claim_prompt_template(tree: Path) -> str:
    """Upstream's single-claim prompt with `{claim}` and `{response}` left in (what identifies it)."""
    module = scores_module(tree)
    evaluator = module.CoverageEvaluator(None, None)
    return str(evaluator._get_single_claim_evaluation_prompt("{claim}", "{response}"))


def prompt_source(tree: Path, repo: str, commit: str) -> Upstream:
    """The judge prompt as a protocol source: upstream's file and the template's sha256."""
    return Upstream.text(
        claim_prompt_template(tree),
        repo=repo,
        commit=commit,
        path=ATLAS_SCORES_FILE,
        symbol="CoverageEvaluator._get_single_claim_evaluation_prompt",
    )


@dataclass(frozen=True)
class ClaimVerdicts:
    """Upstream's `CoverageEvaluator.evaluate` result for one answer: per claim and coverage."""

    coverage: float
    per_claim: list[dict[str, Any]]
    details: dict[str, Any]


async def judge_claims(
    tree: Path, claims: list[str], response: str, model: Model | None = None
) -> ClaimVerdicts:
    """Upstream's coverage evaluation of `response` against `claims`, the judge being `model` (default:
    the model bound to the role `judge`)."""
    module = scores_module(tree)
    judge = model or get_model(role=JUDGE_ROLE)
    config = module.EvaluatorConfig(evaluator_model=judge.name, semaphore_limit=CONCURRENCY)
    evaluator = module.CoverageEvaluator(module.AsyncLiteLLMClient(config), config)
    token = _JUDGE_MODEL.set(judge)
    try:
        result = await evaluator.evaluate(claims, response)
    finally:
        _JUDGE_MODEL.reset(token)
    coverage = result.get("coverage_score")
    per_claim = list(result.get("per_claim", []))
    return ClaimVerdicts(0.0 if coverage is None else float(coverage), per_claim, result)
