"""Judge-vs-verifier agreement: kappa against closed forms, Wilson intervals against scipy and by simulation
(tasks sharing trajectories), kappa's interval by simulation (the agreement task's balanced design and
others), and a judged Inspect run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model
from scipy import stats

from forge_eval.benchmarks.weblab import agreement_from_log, agreement_task, cohen_kappa, judge_agreement
from forge_eval.benchmarks.weblab._agreement import kappa_interval, kappa_of, proportion_interval
from tests.benchmarks.web._scripted import ScriptedJudge


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
    agreement = judge_agreement(truth, judged)
    assert agreement.estimates["accuracy"] == pytest.approx(45 / 60)
    assert agreement.estimates["false_success_rate"] == pytest.approx(9 / 24)
    assert agreement.confusion == {"tp": 30, "fp": 9, "fn": 6, "tn": 15}
    # one trajectory per task: plain Wilson score intervals, as scipy computes them
    for key, (k, n) in {"accuracy": (45, 60), "false_success_rate": (9, 24)}.items():
        ref = stats.binomtest(k, n).proportion_ci(0.95, method="wilson")
        assert agreement.ci[key] == pytest.approx((ref.low, ref.high), abs=1e-9)
    low, high = agreement.ci["kappa"]
    assert low < agreement.estimates["kappa"] < high
    with pytest.raises(ValueError, match="equally long"):
        judge_agreement([True], [True, False])


def test_intervals_keep_a_width_at_0_and_1_and_count_tasks_when_trajectories_share_them() -> None:
    truth, judged = _table(12, 0, 0, 12)  # the judge is right every time
    agreement = judge_agreement(truth, judged)
    assert agreement.estimates["accuracy"] == 1.0 and agreement.ci["accuracy"][1] == 1.0
    assert agreement.ci["accuracy"][0] == pytest.approx(24 / (24 + 1.959964**2))  # Wilson at k = n = 24
    assert agreement.ci["false_success_rate"][0] == pytest.approx(0.0, abs=1e-12)
    assert agreement.ci["false_success_rate"][1] == pytest.approx(1.959964**2 / (12 + 1.959964**2))
    # the same 24 trajectories as 12 tasks of 2: perfect agreement says nothing about independence
    tasks = [f"t{i % 12}" for i in range(24)]
    clustered = judge_agreement(truth, judged, tasks=tasks)
    assert clustered.n_tasks == 12
    assert clustered.ci["accuracy"][0] == pytest.approx(12 / (12 + 1.959964**2))
    # independent outcomes within tasks (ICC <= 0): no design effect
    truth, judged = _table(10, 10, 10, 10)
    pairs = [f"t{i % 20}" for i in range(40)]  # each task: one right, one wrong
    assert judge_agreement(truth, judged, tasks=pairs).ci["accuracy"] == pytest.approx(
        judge_agreement(truth, judged).ci["accuracy"]
    )


def test_proportion_intervals_cover_by_simulation() -> None:
    """Tasks of 1-3 trajectories whose outcomes share a task effect (beta-binomial, ICC 0.3): the
    interval of the mean covers the true proportion about 95% of the time, from middling to extreme."""
    rng = np.random.default_rng(7)
    for p in (0.5, 0.85, 0.97):
        hits, n_sims = 0, 2000
        icc = 0.3
        a, b = p * (1 - icc) / icc, (1 - p) * (1 - icc) / icc  # beta with mean p and ICC 1 / (a + b + 1)
        for _ in range(n_sims):
            sizes = rng.integers(1, 4, 20)
            task_p = rng.beta(a, b, sizes.size)
            values = (rng.random(sizes.sum()) < np.repeat(task_p, sizes)).astype(float)
            low, high = proportion_interval(values, np.repeat(np.arange(sizes.size), sizes))
            hits += low <= p <= high
        assert 0.92 <= hits / n_sims <= 0.995, (p, hits / n_sims)


def test_kappa_of_is_the_2x2_closed_form_and_the_balanced_interval_is_twice_accuracys_minus_one() -> None:
    rng = np.random.default_rng(11)
    for _ in range(50):
        a, b, c, d = (int(x) for x in rng.integers(1, 30, 4))
        pi, se, sp = (a + b) / (a + b + c + d), a / (a + b), d / (c + d)
        assert kappa_of(pi, np.array(se), np.array(sp)) == pytest.approx(cohen_kappa(*_table(a, b, c, d)))
    # the agreement task: one solved and one failed trajectory per task, the judge right on all 24
    truth, judged = [True, False] * 12, [True, False] * 12
    agreement = judge_agreement(truth, judged, tasks=[f"t{i // 2}" for i in range(24)])
    low, high = agreement.ci["accuracy"]
    assert low == pytest.approx(12 / (12 + 1.959964**2))  # [0.758, 1]
    assert agreement.estimates["kappa"] == 1.0
    assert agreement.ci["kappa"] == pytest.approx((2 * low - 1, 1.0))  # not the bootstrap's [1, 1]
    assert agreement.ci_methods["kappa"].startswith("2 x accuracy's interval - 1")
    # any balanced table: kappa is 2 accuracy - 1 exactly, and so is its interval
    truth, judged = _table(9, 3, 5, 7)
    agreement = judge_agreement(truth, judged)
    assert agreement.estimates["kappa"] == pytest.approx(2 * agreement.estimates["accuracy"] - 1)
    assert agreement.ci["kappa"] == pytest.approx(tuple(2 * x - 1 for x in agreement.ci["accuracy"]))
    # no failed trajectory: kappa and its interval are undefined
    assert all(np.isnan(judge_agreement([True] * 4, [True, False] * 2).ci["kappa"]))


@pytest.mark.parametrize("n_tasks", [6, 12])
def test_kappa_interval_covers_in_the_agreement_tasks_design_by_simulation(n_tasks: int) -> None:
    """One solved and one failed trajectory per task, the judge right on each with probability A (task
    effects: none, or beta with ICC 0.3): the 95% interval of kappa (truth 2A - 1) covers at least 93% of
    the time, also at high accuracy, where a bootstrap of kappa collapsed to [1, 1] (coverage 0.4-0.7 at
    A = 0.95)."""
    rng = np.random.default_rng(n_tasks)
    truth = np.tile([True, False], n_tasks)
    tasks = [f"t{i}" for i in np.repeat(np.arange(n_tasks), 2)]
    n_sims = 600
    for accuracy in (0.8, 0.9, 0.95):
        for icc in (0.0, 0.3):
            if icc:
                shape = (1 - icc) / icc
                task_accuracy = rng.beta(accuracy * shape, (1 - accuracy) * shape, (n_sims, n_tasks))
            else:
                task_accuracy = np.full((n_sims, n_tasks), accuracy)
            right = rng.random((n_sims, n_tasks, 2)) < task_accuracy[..., None]
            hits = 0
            for k in range(n_sims):
                judged = np.where(right[k].ravel(), truth, ~truth)
                low, high = judge_agreement(truth, judged, tasks=tasks).ci["kappa"]
                hits += low - 1e-12 <= 2 * accuracy - 1 <= high + 1e-12
            assert hits / n_sims >= 0.93, (n_tasks, accuracy, icc, hits / n_sims)


def test_kappa_interval_covers_in_unbalanced_designs_by_simulation() -> None:
    """Independent trajectories, a third or a quarter of them verifier successes: kappa at that share
    (conditional on the verifier's outcomes) is covered at least 95% of the time by the Bonferroni box."""
    rng = np.random.default_rng(5)
    for n, n_yes, se, sp in ((12, 4, 0.95, 0.95), (12, 4, 1.0, 0.9), (24, 6, 0.9, 0.8)):
        t = np.arange(n) < n_yes
        target = float(kappa_of(n_yes / n, np.array(se), np.array(sp)))
        judged = np.where(t, rng.random((400, n)) < se, rng.random((400, n)) >= sp)
        hits = 0
        for j in judged:
            (low, high), method = kappa_interval(t, j, np.arange(n))
            hits += low - 1e-12 <= target <= high + 1e-12
        assert method.startswith("range of kappa over the Bonferroni box")
        assert hits / 400 >= 0.95, (n, se, sp, hits / 400)


def test_agreement_run_on_oracle_trajectories_with_a_scripted_judge(
    tmp_path: Path, upstream_trees: Path
) -> None:
    judge = get_model("mockllm/judge", custom_outputs=ScriptedJudge(success_if="Result Response: ."))
    task = agreement_task("webvoyager", task_ids="dict-pos,wiki-watch", upstream_dir=str(upstream_trees))
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
    assert agreement.n == 4 and agreement.n_tasks == 2  # a task's two trajectories are one cluster
    assert agreement.ci["false_success_rate"][0] < 1.0  # not a point at 100%
    assert all(s.scores["webvoyager_judge"].metadata["images"] >= 2 for s in log.samples)
