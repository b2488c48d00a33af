"""Behavior metrics with two-level bootstrap CIs, per harness and overall, and paired run comparisons.

Every metric is first reduced to one value per (task, seed) cell — the mean over the cell's eligible
rollouts (epochs) — and the CI comes from `hierarchical_bootstrap` over those cells (tasks, then seeds
within task). Tool-usage shares use the same cells: a cell's share is its calls of the tool over all its
calls, so each task × seed weighs the same however many calls its rollouts made. Paired comparisons of two
runs use `paired_difference`'s scheme (tasks resampled, each keeping its paired cells).
"""

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from forge_eval.analysis._bootstrap import N_RESAMPLES, RANDOM_STATE, BootstrapResult, hierarchical_bootstrap
from forge_eval.analysis._paired import paired_difference
from forge_eval.analysis.behavior._capabilities import CAPABILITIES, capability_names, capability_values
from forge_eval.analysis.behavior._transcripts import Transcripts

SCHEMA_VERSION = 1
GENERIC_SHELL = "generic_shell"
_CELL = ["task_id", "seed"]
SHARE_DEFINITION = (
    "A tool's share of all tool calls, in %: per task × seed, its calls over all calls (over all rollouts, "
    "or over successful rollouts only), then averaged over task × seed cells. The generic-shell share "
    "counts every call of the harness's shell tool (bash, exec_command, Bash, exec). Pooled shares "
    "(all calls of all rollouts together, as the paper counts) are given beside it without an interval."
)


def _interval(result: BootstrapResult, n_cells: int) -> dict[str, Any]:
    return {
        "estimate": result.estimate,
        "ci_low": result.ci_low,
        "ci_high": result.ci_high,
        "n_cells": n_cells,
        "n_tasks": result.n_tasks,
        "n_seeds": result.n_seeds,
    }


def cell_interval(cells: pd.DataFrame, *, n_resamples: int, random_state: int) -> dict[str, Any]:
    """The bootstrap interval of the mean of `value` over (task_id, seed) cells.

    With fewer than two tasks there is no interval over tasks: the estimate comes alone (CI = None).
    """
    cells = cells.dropna(subset=["value"])
    if cells.empty:
        return {"estimate": None, "ci_low": None, "ci_high": None, "n_cells": 0}
    if cells["task_id"].nunique() < 2:
        return {
            "estimate": float(cells["value"].mean()),
            "ci_low": None,
            "ci_high": None,
            "n_cells": len(cells),
        }
    result = hierarchical_bootstrap(
        cells, method="bca", within_task="resample", n_resamples=n_resamples, random_state=random_state
    )
    return _interval(result, len(cells))


def _cells(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """Mean of `column` per (task_id, seed) over rows where it is not NaN."""
    present = frame.dropna(subset=[column])
    return present.groupby(_CELL, as_index=False)[column].mean().rename(columns={column: "value"})


@dataclass(frozen=True)
class _Group:
    """The rollouts of one group (overall, one harness), with their capability values computed once."""

    transcripts: Transcripts
    values: pd.DataFrame  # capability columns, aligned with transcripts.rollouts

    def unmeasurable(self) -> dict[str, str]:
        """Capability name -> why these rollouts cannot show it (only the capabilities that cannot)."""
        calls = self.transcripts.calls[self.transcripts.calls["tool"] != ""]
        found = {
            name: CAPABILITIES.get(name).unmeasurable(self.transcripts.rollouts, calls)
            for name in capability_names()
        }
        return {name: reason for name, reason in found.items() if reason}

    def capability_cells(self) -> dict[str, pd.DataFrame]:
        """Capability name -> its (task_id, seed, value) cells (none for one that is not measurable)."""
        frame = pd.concat([self.transcripts.rollouts[_CELL], self.values], axis=1)
        unmeasurable = self.unmeasurable()
        return {
            name: _cells(frame, name).iloc[0:0] if name in unmeasurable else _cells(frame, name)
            for name in capability_names()
        }


def _agent_calls(transcripts: Transcripts, successful_only: bool) -> pd.DataFrame:
    calls = transcripts.calls[transcripts.calls["tool"] != ""]
    if successful_only:
        solved = transcripts.rollouts.loc[transcripts.rollouts["passed"], ["task_id", "seed", "epoch"]]
        calls = calls.merge(solved, on=["task_id", "seed", "epoch"])
    return calls


def share_cells(transcripts: Transcripts, successful_only: bool) -> dict[str, pd.DataFrame]:
    """Tool name (and `generic_shell`) -> (task_id, seed, value) cells of its % share of calls."""
    calls = _agent_calls(transcripts, successful_only)
    if calls.empty:
        return {}
    counts = pd.crosstab([calls["task_id"], calls["seed"]], calls["tool"])
    counts[GENERIC_SHELL] = calls.groupby(_CELL)["generic_shell"].sum()
    totals = calls.groupby(_CELL).size()
    shares = counts.div(totals, axis=0) * 100.0
    return {
        str(tool): shares[tool].rename("value").reset_index()
        for tool in shares.columns
        if tool != GENERIC_SHELL or calls["generic_shell"].any()
    }


def pooled_shares(transcripts: Transcripts, successful_only: bool) -> dict[str, float]:
    """Tool (and `generic_shell`) -> % of all the group's calls, pooled over rollouts (no interval).

    The paper's way of counting; descriptive only, since long rollouts weigh more in it.
    """
    calls = _agent_calls(transcripts, successful_only)
    if calls.empty:
        return {}
    found = {str(t): 100.0 * n / len(calls) for t, n in calls["tool"].value_counts().items()}
    if calls["generic_shell"].any():
        found[GENERIC_SHELL] = 100.0 * float(calls["generic_shell"].mean())
    return found


def _group_summary(group: _Group, n_resamples: int, random_state: int) -> dict[str, Any]:
    def interval(cells: pd.DataFrame) -> dict[str, Any]:
        return cell_interval(cells, n_resamples=n_resamples, random_state=random_state)

    transcripts = group.transcripts
    rollouts = transcripts.rollouts
    unmeasurable = group.unmeasurable()
    tools_by_count = transcripts.calls.loc[transcripts.calls["tool"] != "", "tool"].value_counts()
    shares, pooled = {}, {}
    for subset, successful in (("all", False), ("successful", True)):
        cells = share_cells(transcripts, successful)
        ordered = [t for t in [*tools_by_count.index, GENERIC_SHELL] if t in cells]
        shares[subset] = {tool: interval(cells[tool]) for tool in ordered}
        pooled[subset] = pooled_shares(transcripts, successful)
    return {
        "n_rollouts": len(rollouts),
        "n_tasks": int(rollouts["task_id"].nunique()),
        "n_seeds": int(rollouts["seed"].nunique()),
        "n_successful": int(rollouts["passed"].sum()),
        "n_calls": int((transcripts.calls["tool"] != "").sum()),
        # rollouts whose proxy records gave a parse verdict per turn ("matched") or could not ("mismatched")
        "proxy_records": {str(k): int(v) for k, v in rollouts["records"].value_counts().items() if k},
        "call_counts": {str(k): int(v) for k, v in tools_by_count.items()},
        "capabilities": {
            name: interval(cells) | ({"not_measurable": unmeasurable[name]} if name in unmeasurable else {})
            for name, cells in group.capability_cells().items()
        },
        "tool_shares": shares,
        "pooled_shares": pooled,
    }


def _split(transcripts: Transcripts) -> dict[str, _Group]:
    values = capability_values(transcripts.rollouts, transcripts.calls)
    groups = {"overall": _Group(transcripts, values)}
    for harness in sorted(transcripts.rollouts["harness"].unique()):
        mine = transcripts.rollouts["harness"] == harness
        sliced = Transcripts(
            transcripts.calls[transcripts.calls["harness"] == harness], transcripts.rollouts[mine]
        )
        groups[f"harness:{harness}"] = _Group(sliced, values[mine])
    return groups


def definitions() -> dict[str, dict[str, str]]:
    """Metric name -> title and the sentence that defines it (the report prints both)."""
    found = {}
    for name in capability_names():
        capability = CAPABILITIES.get(name)
        found[name] = {"title": capability.title, "definition": capability.definition}
    found["tool_shares"] = {"title": "Tool-usage shares", "definition": SHARE_DEFINITION}
    return found


def _estimator(n_resamples: int, random_state: int) -> str:
    return (
        "per metric, the mean over (task, seed) cells of the cell's mean over its eligible rollouts; 95% "
        f"two-level bootstrap (tasks, then seeds within task), BCa, {n_resamples} resamples, seed "
        f"{random_state}; no interval with fewer than 2 tasks"
    )


def summarize_behavior(
    transcripts: Transcripts, *, n_resamples: int = N_RESAMPLES, random_state: int = RANDOM_STATE
) -> dict[str, Any]:
    """All behavior metrics with CIs, overall and per harness, as a JSON-ready dict."""
    return {
        "schema_version": SCHEMA_VERSION,
        "estimator": _estimator(n_resamples, random_state),
        "definitions": definitions(),
        "groups": {
            name: _group_summary(group, n_resamples, random_state)
            for name, group in _split(transcripts).items()
        },
    }


def _paired(
    this: pd.DataFrame, other: pd.DataFrame, n_resamples: int, random_state: int
) -> dict[str, Any] | None:
    """this - other over the cells both runs have; None when fewer than two tasks pair.

    The scheme is `paired_difference`'s own (drawn tasks keep their seeds): pairing cancels the task
    effect, and resampling seeds again would count their noise twice (over-coverage, wider intervals).
    """
    a, b = other.dropna(subset=["value"]), this.dropna(subset=["value"])
    both = a.merge(b, on=_CELL, suffixes=("_a", "_b"))
    if both["task_id"].nunique() < 2:
        return None
    result = paired_difference(a, b, method="bca", n_resamples=n_resamples, random_state=random_state)
    return {
        **_interval(result.difference, result.n_paired),
        "this_run": float(both["value_b"].mean()),
        "compared_run": float(both["value_a"].mean()),
        "n_unpaired": result.n_dropped,
    }


def compare_behavior(
    this: Transcripts, other: Transcripts, *, n_resamples: int = N_RESAMPLES, random_state: int = RANDOM_STATE
) -> dict[str, Any]:
    """Paired differences this − other of every behavior metric, on the (task, seed) cells both have.

    Returns:
        Per group present in both runs: capability and tool-share differences with CIs
        (`estimate` = mean paired difference, `this_run`/`compared_run` = the paired cells' means).
    """
    groups: dict[str, Any] = {}
    other_groups = _split(other)
    for name, group in _split(this).items():
        if name not in other_groups:
            continue
        mine, theirs = group.capability_cells(), other_groups[name].capability_cells()
        capabilities = {m: _paired(mine[m], theirs[m], n_resamples, random_state) for m in mine}
        shares = {}
        for subset, successful in (("all", False), ("successful", True)):
            a = share_cells(other_groups[name].transcripts, successful)
            b = share_cells(group.transcripts, successful)
            # a tool one run never called has share 0 in every cell where the run made calls
            for tool in sorted(set(a) | set(b)):
                shares.setdefault(subset, {})[tool] = _paired(
                    _with_zero(b, tool), _with_zero(a, tool), n_resamples, random_state
                )
        groups[name] = {"capabilities": capabilities, "tool_shares": shares}
    return {"direction": "this run minus the compared run", "groups": groups}


def _with_zero(cells: dict[str, pd.DataFrame], tool: str) -> pd.DataFrame:
    if tool in cells:
        return cells[tool].fillna(0.0)
    if not cells:
        return pd.DataFrame(columns=[*_CELL, "value"])
    any_cells = next(iter(cells.values()))
    return any_cells.assign(value=np.zeros(len(any_cells)))
