"""Each behavior metric on hand-built transcripts whose values are known, plus CIs and comparisons."""

import math

import numpy as np
import pandas as pd
import pytest
from _behavior_logs import Call, eval_log, sample, service_metadata, turn
from scipy import stats

from forge_eval.analysis.behavior import (
    capability_values,
    compare_behavior,
    read_transcripts,
    summarize_behavior,
)

PLAN = [
    {"id": "s1", "tool": "tickets_get", "args": {"ticket_id": "T-1"}, "description": "read the ticket"},
    {"id": "s2", "tool": "mail_send", "args": {"subject": "Re: T-1"}, "description": "answer"},
]
# what forgelab records: the services, the tools and plan the task needs, how its tools touch the services
META = {**service_metadata("tickets", "mail"), "required_tools": ["tickets_get", "mail_send"], "plan": PLAN}

ROLLOUTS = {
    # name: (turns, score)
    "verifies": (
        [
            turn(Call("tickets_get", {"ticket_id": "T-1"}, "{}")),
            turn(Call("mail_send", {"to": ["a@x"], "subject": "Re: T-1", "body": "b"}, '{"id": "m9"}')),
            turn(Call("mail_read", {"message_id": "m9"}, "{}")),
            turn(text="done"),
        ],
        1.0,
    ),
    "no_read_back": (
        [
            turn(Call("mail_send", {"to": ["a@x"], "subject": "Re: T-1", "body": "b"}, '{"id": "m1"}')),
            turn(text="done"),
        ],
        0.0,
    ),
    "no_writes": ([turn(Call("tickets_get", {"ticket_id": "T-1"}, "{}")), turn(text="done")], 0.0),
    "recovers": (
        [
            turn(Call("tickets_get", {"ticket_id": "T-404"}, "not found", error="unknown")),
            turn(Call("tickets_get", {"ticket_id": "T-1"}, "{}")),
            turn(Call("mail_send", {"to": ["a@x"], "subject": "Re: T-1", "body": "b"}, '{"id": "m2"}')),
            turn(text="done"),
        ],
        1.0,
    ),
    "fails_and_gives_up": (
        [turn(Call("tickets_get", {"ticket_id": "T-1"}, "boom", error="unknown")), turn(text="sorry")],
        0.0,
    ),
    "malformed_end": (
        [turn(Call("tickets_get", {"ticket_id": "T-1"}, "{}")), turn(text='<tool_call>{"name": "mail_send"')],
        0.0,
    ),
    "failed_plan_step": (
        [
            turn(Call("tickets_get", {"ticket_id": "T-1"}, "{}")),
            turn(Call("mail_send", {"subject": "Re: T-1", "body": "b"}, "rejected", error="unknown")),
            turn(text="done"),
        ],
        0.0,
    ),
}

# name: (format, recovery, verification, coverage, plan complete, plan fraction)
EXPECTED = {
    "verifies": (100, None, 100, 100, 100, 100),
    "no_read_back": (100, None, 0, 50, 0, 50),
    "no_writes": (100, None, None, 50, 0, 50),
    "recovers": (100, 100, 0, 100, 100, 100),
    "fails_and_gives_up": (100, 0, None, 50, 0, 0),
    "malformed_end": (0, None, None, 50, 0, 50),
    "failed_plan_step": (100, 0, None, 100, 0, 50),  # its only write failed: nothing to verify
}
COLUMNS = [
    "format_robustness",
    "error_recovery",
    "self_verification",
    "tool_coverage",
    "plan_completion",
    "plan_fraction",
]


def _sample(task_id: str, rollout: str, native: bool = True):
    turns, score = ROLLOUTS[rollout]
    return sample(task_id, turns, score=score, metadata=META, native=native)


def _transcripts(names: list[str], seeds: tuple[int, ...] = (0,), native: bool = True):
    logs = []
    for seed in seeds:
        samples = [_sample(n, n, native) for n in names]
        logs.append(eval_log(samples, seed=seed))
    return read_transcripts(logs)


@pytest.mark.parametrize("native", [True, False], ids=["native", "bridged"])
def test_each_capability_per_rollout(native: bool) -> None:
    t = _transcripts(list(ROLLOUTS), native=native)
    values = capability_values(t.rollouts, t.calls)
    for task_id, row in zip(t.rollouts["task_id"], values[COLUMNS].itertuples(index=False), strict=True):
        expected = [math.nan if v is None else float(v) for v in EXPECTED[task_id]]
        np.testing.assert_array_equal(np.array(row, dtype=float), expected, err_msg=task_id)


def test_shell_writes_and_reads_in_one_command_verifies() -> None:
    both = [turn(Call("bash", {"command": "echo 1 > n.txt && cat n.txt"}, "1")), turn(text="done")]
    write_only = [turn(Call("bash", {"command": "echo 1 > n.txt; cat m.txt"}, "")), turn(text="done")]
    read_first = [turn(Call("bash", {"command": "cat n.txt; echo 1 > n.txt"}, "")), turn(text="done")]
    t = read_transcripts([eval_log([sample("a", both), sample("b", write_only), sample("c", read_first)])])
    assert t.calls["access"].tolist() == ["read_write"] * 3
    assert capability_values(t.rollouts, t.calls)["self_verification"].tolist() == [100.0, 0.0, 0.0]


def test_no_metadata_means_no_coverage_or_plan_and_no_failures_means_no_recovery_value() -> None:
    turns = [turn(Call("bash", {"command": "ls"}, "x")), turn(text="ok")]
    t = read_transcripts([eval_log([sample("a", turns)])])
    values = capability_values(t.rollouts, t.calls).iloc[0]
    assert values["format_robustness"] == 100.0
    for name in ("error_recovery", "self_verification", "tool_coverage", "plan_completion", "plan_fraction"):
        assert math.isnan(values[name]), name


def test_coverage_falls_back_to_services() -> None:
    meta = {"services": ["tickets", "mail", "kb"]}
    t = read_transcripts([eval_log([sample("a", ROLLOUTS["verifies"][0], metadata=meta)])])
    assert capability_values(t.rollouts, t.calls)["tool_coverage"].tolist() == [pytest.approx(200 / 3)]


def _cell_means(frame: pd.DataFrame, column: str) -> float:
    return frame.dropna(subset=[column]).groupby(["task_id", "seed"])[column].mean().mean()


def test_summary_estimates_are_cell_means_and_cis_bracket_them() -> None:
    t = _transcripts(list(ROLLOUTS), seeds=(1, 2))
    summary = summarize_behavior(t, n_resamples=400)
    overall = summary["groups"]["overall"]
    assert set(summary["groups"]) == {"overall", "harness:react"}
    values = pd.concat([t.rollouts[["task_id", "seed"]], capability_values(t.rollouts, t.calls)], axis=1)
    for name in COLUMNS:
        got = overall["capabilities"][name]
        assert got["estimate"] == pytest.approx(_cell_means(values, name)), name
        assert got["ci_low"] <= got["estimate"] <= got["ci_high"], name
        assert summary["definitions"][name]["definition"]
    assert overall["n_rollouts"] == 14 and overall["n_tasks"] == 7 and overall["n_seeds"] == 2


def test_tool_shares_all_and_successful() -> None:
    ls, pwd, uid = ({"command": c} for c in ("ls", "pwd", "id"))
    a = [turn(Call("bash", ls), Call("bash", pwd), Call("submit", {"answer": "x"}))]
    b = [turn(Call("bash", ls), Call("bash", uid), Call("submit", {"answer": "y"}))]
    c = [turn(Call("text_editor", {"command": "view", "path": "a"}), Call("submit", {"answer": "z"}))]
    log = eval_log([sample("a", a, score=1.0), sample("b", b, score=0.0), sample("c", c, score=1.0)])
    overall = summarize_behavior(read_transcripts([log]), n_resamples=400)["groups"]["overall"]
    shares = overall["tool_shares"]
    # per task: a = 2/3 bash, b = 2/3 bash, c = 0 bash; successful: a and c only
    assert shares["all"]["bash"]["estimate"] == pytest.approx(100 * (2 / 3 + 2 / 3 + 0) / 3)
    assert shares["successful"]["bash"]["estimate"] == pytest.approx(100 * (2 / 3 + 0) / 2)
    assert shares["all"]["generic_shell"]["estimate"] == shares["all"]["bash"]["estimate"]
    assert shares["all"]["submit"]["estimate"] == pytest.approx(100 * (1 / 3 + 1 / 3 + 1 / 2) / 3)
    assert list(shares["all"])[:1] == ["bash"]  # most called first, generic shell last
    assert list(shares["all"])[-1] == "generic_shell"
    # pooled over all calls (8 in all, 5 in successful rollouts), as the paper counts
    assert overall["pooled_shares"]["all"]["bash"] == pytest.approx(100 * 4 / 8)
    assert overall["pooled_shares"]["successful"]["bash"] == pytest.approx(100 * 2 / 5)
    assert overall["pooled_shares"]["all"]["generic_shell"] == pytest.approx(100 * 4 / 8)


def test_single_task_gives_an_estimate_without_interval() -> None:
    t = _transcripts(["verifies"])
    got = summarize_behavior(t, n_resamples=400)["groups"]["overall"]["capabilities"]["format_robustness"]
    assert got == {"estimate": 100.0, "ci_low": None, "ci_high": None, "n_cells": 1}


def test_interval_agrees_with_scipy_bca_with_one_seed_per_task() -> None:
    """Independent reference: with one seed per task the two-level bootstrap is scipy's one-level BCa."""
    rng = np.random.default_rng(3)
    turns_ok, turns_bad = ROLLOUTS["verifies"][0], ROLLOUTS["no_read_back"][0]
    picks = rng.random(40) < 0.6
    samples = [sample(f"t{i}", turns_ok if p else turns_bad, metadata=META) for i, p in enumerate(picks)]
    t = read_transcripts([eval_log(samples)])
    got = summarize_behavior(t, n_resamples=4000)["groups"]["overall"]["capabilities"]["self_verification"]
    reference = stats.bootstrap(
        (100.0 * picks,), np.mean, n_resamples=4000, method="BCa", random_state=np.random.default_rng(0)
    ).confidence_interval
    assert got["estimate"] == pytest.approx(100 * picks.mean())
    assert got["ci_low"] == pytest.approx(reference.low, abs=2.5)
    assert got["ci_high"] == pytest.approx(reference.high, abs=2.5)


def test_paired_comparison_is_this_minus_other_on_shared_cells() -> None:
    names = ["verifies", "no_read_back", "recovers", "failed_plan_step"]
    better = _transcripts(names, seeds=(1, 2))
    worse_rollouts = {"verifies": "no_read_back", "no_read_back": "no_read_back", "recovers": "recovers"}
    logs = []
    for seed in (1, 2):
        samples = [_sample(n, w) for n, w in worse_rollouts.items()]
        logs.append(eval_log(samples, seed=seed))
    worse = read_transcripts(logs)
    result = compare_behavior(better, worse, n_resamples=400)
    assert result["direction"] == "this run minus the compared run"
    diff = result["groups"]["overall"]["capabilities"]["self_verification"]
    # paired cells: verifies 100 vs 0, no_read_back 0 vs 0, recovers 0 vs 0 (x 2 seeds)
    assert diff["estimate"] == pytest.approx(100 / 3)
    assert diff["this_run"] == pytest.approx(100 / 3) and diff["compared_run"] == pytest.approx(0.0)
    assert diff["n_cells"] == 6 and diff["n_unpaired"] == 0  # failed_plan_step: no value (its write failed)
    format_diff = result["groups"]["overall"]["capabilities"]["format_robustness"]
    assert format_diff["n_cells"] == 6 and format_diff["n_unpaired"] == 2  # failed_plan_step has no partner
    assert diff["ci_low"] <= diff["estimate"] <= diff["ci_high"]
    shares = result["groups"]["overall"]["tool_shares"]["all"]
    assert shares["mail_read"]["estimate"] > 0  # only the better run reads mail back


def test_a_task_that_requires_no_tools_does_not_count_for_coverage() -> None:
    refusal = {"services": ["mail"], "required_tools": [], "plan": []}
    refuses = sample("a", [turn(Call("submit", {"answer": "no"}))], metadata=refusal)
    t = read_transcripts([eval_log([refuses])])
    values = capability_values(t.rollouts, t.calls).iloc[0]
    assert math.isnan(values["tool_coverage"]) and math.isnan(values["plan_completion"])


@pytest.mark.parametrize(
    ("step_args", "call_args", "done"),
    [
        ({"subject": "Re: T-1"}, {"subject": "  re: t-1 ", "body": "x"}, True),
        ({"to": ["a@x", "b@x"]}, {"to": ["B@x", "a@x"]}, True),
        ({"to": ["a@x", "b@x"]}, {"to": ["a@x"]}, False),
        ({"ticket_id": 3}, {"ticket_id": "3"}, True),
        ({"fields": {"status": "closed"}}, {"fields": {"status": "Closed", "note": "ok"}}, True),
        ({"fields": {"status": "closed"}}, {"fields": {"status": "open"}}, False),
        ({"subject": "x"}, {}, False),
    ],
)
def test_plan_step_argument_matching(step_args: dict, call_args: dict, done: bool) -> None:
    plan = [{"id": "s", "tool": "mail_send", "args": step_args, "description": ""}]
    meta = {"services": ["mail"], "required_tools": ["mail_send"], "plan": plan}
    t = read_transcripts([eval_log([sample("a", [turn(Call("mail_send", call_args, "{}"))], metadata=meta)])])
    assert capability_values(t.rollouts, t.calls)["plan_completion"].tolist() == [100.0 * done]


def test_a_run_without_any_call_completes_no_plan_step() -> None:
    """A run whose model never called a tool (a small model's plain answers) has an empty frame of calls,
    its columns untyped: each plan is 0% done, not an error (the run's report is built from this)."""
    plan = [{"id": "s", "tool": "mail_send", "args": {}, "description": ""}]
    meta = {"services": ["mail"], "required_tools": ["mail_send"], "plan": plan}
    samples = [sample("a", [turn()], metadata=meta), sample("b", [turn()], metadata=meta)]
    t = read_transcripts([eval_log(samples)])
    assert t.calls.empty
    assert capability_values(t.rollouts, t.calls)["plan_completion"].tolist() == [0.0, 0.0]
