"""`forge-eval analyze --compare`: the paired intervals' coverage in simulation, against a known truth.

Two runs of the same 40 tasks x 3 seeds: a behavior metric (0-100) per cell = a task level shared by both
runs (large, cancels in the pairing) + a task-specific effect of the change (mean DELTA, spread TAU) + cell
noise. The population mean difference is DELTA exactly. The comparison must use the same paired scheme as
`analysis/_paired.py` (tasks resampled, each keeping its cells), whose nominal 95% interval covers ~95%;
resampling seeds again within task counts their noise twice and over-covers (the defect this pins down).
"""

import numpy as np
import pandas as pd
import pytest

from forge_eval.analysis.behavior._summary import _paired

N_TASKS, N_SEEDS, DELTA, TAU, SIGMA = 40, 3, 8.0, 6.0, 15.0


def _runs(rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    tasks, seeds = (a.ravel() for a in np.indices((N_TASKS, N_SEEDS)))
    level = rng.normal(50, 20, size=(N_TASKS, 1))
    effect = rng.normal(DELTA, TAU, size=(N_TASKS, 1))
    other = level + rng.normal(0, SIGMA, size=(N_TASKS, N_SEEDS))
    this = level + effect + rng.normal(0, SIGMA, size=(N_TASKS, N_SEEDS))
    frame = {"task_id": [f"t{t}" for t in tasks], "seed": seeds}
    return pd.DataFrame({**frame, "value": this.ravel()}), pd.DataFrame({**frame, "value": other.ravel()})


@pytest.mark.slow
def test_compare_intervals_cover_the_true_difference_at_the_nominal_rate():
    rng = np.random.default_rng(5)
    repetitions, hits, widths = 500, 0, []
    for repetition in range(repetitions):
        this, other = _runs(rng)
        diff = _paired(this, other, n_resamples=1000, random_state=repetition)
        hits += diff["ci_low"] <= DELTA <= diff["ci_high"]
        widths.append(diff["ci_high"] - diff["ci_low"])
    coverage = hits / repetitions
    print(f"\ncoverage[analyze --compare, paired BCa] = {coverage:.3f}, mean width {np.mean(widths):.2f}")
    assert 0.93 <= coverage <= 0.97


def test_compare_estimate_is_this_minus_other_on_paired_cells():
    this, other = _runs(np.random.default_rng(1))
    diff = _paired(this, other.iloc[3:], n_resamples=200, random_state=0)
    paired = this.iloc[3:]["value"].to_numpy() - other.iloc[3:]["value"].to_numpy()
    assert diff["estimate"] == pytest.approx(paired.mean())
    assert diff["n_cells"] == len(paired) and diff["n_unpaired"] == 3
