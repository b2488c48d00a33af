"""The five capabilities, each a per-rollout value on 0-100 (NaN where the rollout is not eligible).

Every metric is registered in `CAPABILITIES` with the sentence that defines it; the report prints the
sentence next to the number. Aggregation (to task x seed cells, then the bootstrap) lives in
`_summary.py`, so a definition here reads as exactly what is measured for one rollout.
"""

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from forge_eval._registry import Registry
from forge_eval.analysis.behavior._access import same_resource
from forge_eval.analysis.behavior._gc import gc_paused

FAILED_COMMAND_KINDS = frozenset({"tool_error", "nonzero_exit", "timeout"})


def _always_measurable(rollouts: pd.DataFrame, calls: pd.DataFrame) -> str | None:
    return None


@dataclass(frozen=True)
class Capability:
    """A behavior metric: `value(rollout, calls)` -> 0-100, or NaN when the rollout does not count;
    `unmeasurable(rollouts, calls)` says why a set of rollouts cannot show the metric at all (None: it
    can), so the report says so instead of an empty value that reads as "no eligible rollouts"."""

    title: str
    definition: str
    value: Callable[[Mapping[str, Any], pd.DataFrame], float]
    unmeasurable: Callable[[pd.DataFrame, pd.DataFrame], str | None] = _always_measurable


CAPABILITIES: Registry[Capability] = Registry("behavior metric")
_REGISTRATION_ORDER: list[str] = []


def _register(name: str, capability: Capability) -> None:
    CAPABILITIES.register(name, capability)
    _REGISTRATION_ORDER.append(name)


def _format_robustness(rollout: Mapping[str, Any], calls: pd.DataFrame) -> float:
    return 0.0 if rollout["ended_malformed"] else 100.0


def _error_recovery(rollout: Mapping[str, Any], calls: pd.DataFrame) -> float:
    if not calls["error_kind"].isin(FAILED_COMMAND_KINDS).any():
        return math.nan
    return 100.0 if rollout["passed"] else 0.0


NO_EXIT_STATUS = (
    "not measurable for this log: its shell tool's results carry no exit status and the run names no "
    "harness that reports one (Inspect's bash() returns stderr and stdout only), so a failed command "
    "cannot be told from one that succeeded; forge-eval's harnesses report it (react's bash appends "
    "`exit status: N`)"
)


def _failures_unseen(rollouts: pd.DataFrame, calls: pd.DataFrame) -> str | None:
    """Error recovery needs failed commands to be visible: not so for shell calls of a run that names no
    harness when no shell result shows an exit status (a plain Inspect `bash()` run)."""
    shell = calls[calls["generic_shell"].astype(bool)] if len(calls) else calls
    if shell.empty or shell["error_kind"].isin(("nonzero_exit", "timeout")).any():
        return None
    named = rollouts.get("harness_named", pd.Series(True, index=rollouts.index)).astype(bool)
    unnamed = rollouts.loc[~named, ["task_id", "seed", "epoch"]]
    if unnamed.empty or shell.merge(unnamed, on=["task_id", "seed", "epoch"]).empty:
        return None
    return NO_EXIT_STATUS


def reads_back(calls: pd.DataFrame, *, checks: bool = False) -> bool | None:
    """Whether the rollout checked a write after making it (None: the rollout wrote nothing named).

    Without `checks`: some written resource is read after the write (a read of its folder, `ls dir` or
    `grep -r x dir`, covers it: `same_resource`). With `checks`, also any later call that checks the
    work without reading a written path: runs the tests or `git diff`/`git status` (`verifies`).

    Accesses are taken in call order and, within a call, in the order the call performs them, so
    `echo x > f && cat f` reads back `f` in one command. A write by a call that failed wrote nothing
    there is to verify, so it does not count; and a read after a failed edit of a file looks at the
    failure, not at a write, so that file counts again only once a write of it succeeds.
    """
    written: list[str] = []
    wrote = False
    for accesses, failed, verifies in zip(calls["accesses"], calls["failed"], calls["verifies"], strict=True):
        if checks and written and verifies:
            return True
        for op, resource in accesses:
            if op == "write":
                if failed:
                    written = [w for w in written if not same_resource(w, resource)]
                else:
                    written.append(resource)
                    wrote = True
            elif any(same_resource(resource, w) for w in written):
                return True
    return False if wrote else None


def _self_verification(rollout: Mapping[str, Any], calls: pd.DataFrame) -> float:
    verified = reads_back(calls, checks=True)
    return math.nan if verified is None else 100.0 * verified


def _read_back(rollout: Mapping[str, Any], calls: pd.DataFrame) -> float:
    verified = reads_back(calls)
    return math.nan if verified is None else 100.0 * verified


def _tool_coverage(rollout: Mapping[str, Any], calls: pd.DataFrame) -> float:
    required_tools = rollout["required_tools"]
    if isinstance(required_tools, list):  # the task names its tools ([] = none needed, e.g. a refusal)
        required, touched = set(required_tools), set(calls["tool"])
    else:
        required, touched = set(rollout["services"]), set(calls["service"].dropna())
    if not required:
        return math.nan
    return 100.0 * len(required & touched) / len(required)


def _same(expected: Any, actual: Any) -> bool:
    """Argument equality as a reader would judge it.

    Strings ignore case and surrounding space, a number matches its text ("3" == 3), lists ignore
    order, objects match on the expected keys.
    """
    if isinstance(expected, dict) and isinstance(actual, dict):
        return _matches(expected, actual)
    if isinstance(expected, list | tuple) and isinstance(actual, list | tuple):
        return (
            len(expected) == len(actual)
            and all(any(_same(e, a) for a in actual) for e in expected)
            and all(any(_same(e, a) for e in expected) for a in actual)
        )
    if isinstance(expected, str) or isinstance(actual, str):
        return str(expected).strip().casefold() == str(actual).strip().casefold()
    return bool(expected == actual)


def _matches(step_args: Mapping[str, Any], arguments: Mapping[str, Any]) -> bool:
    return all(k in arguments and _same(v, arguments[k]) for k, v in step_args.items())


def plan_steps_done(plan: list[Mapping[str, Any]], calls: pd.DataFrame) -> int:
    """How many plan steps some successful call completed: the step's tool, with its argument subset."""
    ok = calls.loc[~calls["failed"].astype(bool)]  # an empty frame's object column is no mask
    by_tool: dict[str, list[Mapping[str, Any]]] = {}
    for tool, arguments in zip(ok["tool"], ok["arguments"], strict=True):
        by_tool.setdefault(tool, []).append(arguments)
    done = 0
    for step in plan:
        candidates = by_tool.get(str(step.get("tool")), [])
        done += any(_matches(step.get("args") or {}, a) for a in candidates)
    return done


def _plan_completion(rollout: Mapping[str, Any], calls: pd.DataFrame) -> float:
    plan = rollout["plan"]
    if not plan:
        return math.nan
    return 100.0 * (plan_steps_done(plan, calls) == len(plan))


def _plan_fraction(rollout: Mapping[str, Any], calls: pd.DataFrame) -> float:
    plan = rollout["plan"]
    if not plan:
        return math.nan
    return 100.0 * plan_steps_done(plan, calls) / len(plan)


_register(
    "format_robustness",
    Capability(
        "Format robustness",
        "100 minus the % of rollouts that terminated on a malformed tool-call payload: the last model "
        "turn was a parse failure marked by the model server, Inspect or the proxy's record, or its text "
        "is itself a tool-call payload that did not parse (an answer that quotes one is an answer).",
        _format_robustness,
    ),
)
_register(
    "error_recovery",
    Capability(
        "Error recovery",
        "Among rollouts with at least one failed command (tool error, non-zero exit or timeout), the % that "
        "still solve the task.",
        _error_recovery,
        _failures_unseen,
    ),
)
_register(
    "self_verification",
    Capability(
        "Self-verification",
        "Among rollouts that write at least one named resource (file or service object) with a call that "
        "did not fail, the % that check the work after a write: read a written resource back (also by "
        "listing or searching its folder), run the tests, or run `git diff`/`git status`. A read after a "
        "failed edit of a file does not count for that file.",
        _self_verification,
    ),
)
_register(
    "read_back",
    Capability(
        "Read-back of own writes",
        "Among the same rollouts, the % that read one of the written resources back after writing it "
        "(also by listing or searching its folder): self-verification without tests and git.",
        _read_back,
    ),
)
_register(
    "tool_coverage",
    Capability(
        "Tool coverage",
        "Mean % of the task's required tools (metadata required_tools; without it, its services) that "
        "the rollout called at least once; tasks that require none do not count.",
        _tool_coverage,
    ),
)
_register(
    "plan_completion",
    Capability(
        "Plan completion",
        "% of rollouts in which every step of the task's plan was done by a successful call of the "
        "step's tool whose arguments include the step's arguments (any order).",
        _plan_completion,
    ),
)
_register(
    "plan_fraction",
    Capability(
        "Plan steps completed",
        "Mean % of the task's plan steps done (same matching as plan completion).",
        _plan_fraction,
    ),
)


def capability_names() -> list[str]:
    """Registered capabilities in registration order (the paper's order), not alphabetically."""
    names = CAPABILITIES.names()
    return [n for n in _REGISTRATION_ORDER if n in names] + [n for n in names if n not in _REGISTRATION_ORDER]


def capability_values(rollouts: pd.DataFrame, calls: pd.DataFrame) -> pd.DataFrame:
    """One column per capability (0-100 or NaN) for each rollout, aligned with `rollouts`."""
    keys = ["task_id", "seed", "epoch"]
    grouped = {k: g for k, g in calls.groupby(keys, sort=False)} if len(calls) else {}
    empty = calls.iloc[0:0]
    rows = []
    with gc_paused():
        for rollout in rollouts.to_dict("records"):
            own = grouped.get((rollout["task_id"], rollout["seed"], rollout["epoch"]), empty)
            agent_calls = own[own["tool"] != ""]
            rows.append({name: cap.value(rollout, agent_calls) for name, cap in CAPABILITIES.items()})
    return pd.DataFrame(rows, index=rollouts.index, columns=capability_names())
