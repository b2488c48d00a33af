"""How the ablation spends its CPU: the order its runs go to the workers, and the garbage collector's
settings while a run trains (neither changes a number; `bench/ablation_step.py` measures them)."""

import gc
import weakref

from forge_eval.training.ablation import AblationConfig
from forge_eval.training.ablation._experiment import STEP_COST, longest_first
from forge_eval.training.ablation._run import GC_YOUNG_THRESHOLD, collector_tuned


def test_the_costliest_variants_runs_go_first_and_each_variants_in_seed_order():
    configs = AblationConfig().run_configs()
    assert [rc.variant for rc in configs[:3]] == ["broadcast", "masked", "terminal"]  # seed-major
    ordered = longest_first(configs)
    assert sorted(ordered, key=configs.index) == configs  # the same runs
    costs = [STEP_COST.get(rc.variant, 1.0) for rc in ordered]
    assert costs == sorted(costs, reverse=True) and costs[0] > costs[-1]
    assert [(rc.variant, rc.seed) for rc in ordered[:8]] == [("broadcast", s) for s in range(8)]
    rest = [(rc.variant, rc.seed) for rc in ordered[8:]]
    assert rest == [(v, s) for s in range(8) for v in ("masked", "terminal")]


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def test_the_tuned_collector_freezes_the_heap_still_frees_cycles_and_is_restored():
    before = gc.get_threshold()
    with collector_tuned():
        assert gc.get_threshold() == (GC_YOUNG_THRESHOLD, *before[1:])
        assert gc.get_freeze_count() > 0
        a, b = _Node(), _Node()
        a.other, b.other = b, a  # a cycle: only the collector frees it
        alive = weakref.ref(a)
        del a, b
        gc.collect()
        assert alive() is None
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
