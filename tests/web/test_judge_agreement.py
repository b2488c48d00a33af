"""Judge-vs-verifier agreement: kappa against closed forms, CIs against scipy, and a judged Inspect run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model
from scipy import stats

from forge_eval.benchmarks.web.judges import keep_screenshots, parse_relevance, parse_status, parse_verdict
from forge_eval.benchmarks.weblab import agreement_from_log, agreement_task, cohen_kappa, judge_agreement
from tests.web._scripted import ScriptedJudge


def _table(a: int, b: int, c: int, d: int) -> tuple[list[bool], list[bool]]:
    """Truth/judge lists for the 2x2 table [[a (both yes), b], [c, d (both no)]] (rows: truth)."""
    truth = [True] * (a + b) + [False] * (c + d)
    judged = [True] * a + [False] * b + [True] * c + [False] * d
    return truth, judged


def test_kappa_matches_closed_forms() -> None:
    # The textbook example (50 items: 20 yes-yes, 5 yes-no, 10 no-yes, 15 no-no) has kappa 0.4.
    assert cohen_kappa(*_table(20, 5, 10, 15)) == pytest.approx(0.4)
    rng = np.random.default_rng(3)
    for _ in range(200):
        a, b, c, d = (int(x) for x in rng.integers(0, 30, 4))
        if min(a + b, c + d, a + c, b + d) == 0:
            continue
        # 2x2 closed form: 2(ad - bc) / ((a+b)(b+d) + (a+c)(c+d)).
        expected = 2 * (a * d - b * c) / ((a + b) * (b + d) + (a + c) * (c + d))
        assert cohen_kappa(*_table(a, b, c, d)) == pytest.approx(expected)
    assert np.isnan(cohen_kappa([True, True], [True, True]))


def test_agreement_estimates_and_cis() -> None:
    truth, judged = _table(30, 6, 9, 15)
    agreement = judge_agreement(truth, judged, n_boot=4000, seed=1)
    assert agreement.estimates["accuracy"] == pytest.approx(45 / 60)
    assert agreement.estimates["false_success_rate"] == pytest.approx(9 / 24)
    assert agreement.confusion == {"tp": 30, "fp": 9, "fn": 6, "tn": 15}
    # The accuracy CI agrees with scipy's paired percentile bootstrap (Monte Carlo error ~0.01).
    ref = stats.bootstrap(
        (np.array(truth), np.array(judged)),
        lambda t, j: np.mean(t == j),
        paired=True,
        vectorized=False,
        n_resamples=4000,
        method="percentile",
        random_state=2,
    ).confidence_interval
    assert agreement.ci["accuracy"][0] == pytest.approx(ref.low, abs=0.03)
    assert agreement.ci["accuracy"][1] == pytest.approx(ref.high, abs=0.03)
    low, high = agreement.ci["kappa"]
    assert low < agreement.estimates["kappa"] < high
    with pytest.raises(ValueError, match="equally long"):
        judge_agreement([True], [True, False])


def test_judge_reply_parsing_and_screenshot_selection() -> None:
    assert parse_verdict("... Verdict: SUCCESS") is True
    assert parse_verdict("Verdict: NOT SUCCESS") is False and parse_verdict("verdict: failure") is False
    assert parse_verdict("I think it worked") is None
    assert parse_relevance("Score: 4") == 4 and parse_relevance("no score") == 1
    assert parse_status('Status: "success"') is True and parse_status("Status: failure") is False
    assert keep_screenshots([1, 3, 5, 2, 4]) == [1, 2, 4]
    many = [5 if i % 2 else 3 for i in range(120)]
    kept = keep_screenshots(many)
    assert len(kept) == 50 and all(many[i] == 5 for i in kept) and kept == sorted(kept)


def test_agreement_run_on_oracle_trajectories_with_a_scripted_judge(tmp_path: Path) -> None:
    judge = get_model("mockllm/judge", custom_outputs=ScriptedJudge(success_if="Final response: ."))
    task = agreement_task("webvoyager", task_ids="dict-pos,wiki-watch")
    (log,) = inspect_eval(task, model=judge, log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    verdicts = {
        s.id: (s.scores["weblab_verifier"].value, s.scores["webvoyager_judge"].value) for s in log.samples
    }
    # Solved trajectories pass the verifier; the "wrong" ones fail it, and this judge believes any answer.
    assert verdicts == {
        "dict-pos@solve": (1.0, 1.0),
        "dict-pos@wrong": (0.0, 1.0),
        "wiki-watch@solve": (1.0, 1.0),
        "wiki-watch@wrong": (0.0, 1.0),
    }
    agreement = agreement_from_log(log, "webvoyager_judge")
    assert agreement.estimates["accuracy"] == 0.5 and agreement.estimates["false_success_rate"] == 1.0
    assert all(s.scores["webvoyager_judge"].metadata["images"] >= 2 for s in log.samples)
