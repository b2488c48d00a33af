"""Token fidelity on hand-built harness traffic: break causes, the per-harness sum, the per-step table."""

from forge_eval.training import build_trajectory, by_harness, fidelity_table, rollout_fidelity
from forge_eval.training.fidelity import StepFidelity
from tests.training.traffic import claude_code_rollout, codex_rollout, openclaw_rollout


def test_breaks_are_attributed_to_side_conversations_and_compaction():
    # Claude Code: title | planner, action | subagent, subagent | action, compaction | answer. The
    # planner follows the title call and the subagent starts its own conversation (2 subagent breaks);
    # the answer starts over from the compacted summary (1 compaction break); the other 4 extend a chain.
    fidelity = rollout_fidelity(build_trajectory(*claude_code_rollout()[:2]))
    assert (fidelity.checked, fidelity.exact) == (7, 4)
    assert dict(fidelity.breaks) == {"subagent": 2, "compaction": 1}
    assert fidelity.exact_share == 4 / 7 and fidelity.without_ids == 0


def test_a_rollout_missing_one_calls_ids_is_unverified():
    record, calls, _ = codex_rollout()
    calls[2] = calls[2].model_copy(update={"prompt_token_ids": None})
    fidelity = rollout_fidelity(build_trajectory(record, calls))
    assert (fidelity.calls, fidelity.without_ids, fidelity.unverified_rollouts) == (5, 1, 1)
    assert fidelity.checked == 3  # the 4 calls with ids, after the first


def test_harness_totals_and_step_table():
    rollouts = [claude_code_rollout("a"), claude_code_rollout("b"), openclaw_rollout("c")]
    fidelities = [rollout_fidelity(build_trajectory(r, c)) for r, c, _ in rollouts]
    totals = by_harness(fidelities)
    assert list(totals) == ["claude_code", "openclaw"]
    assert (totals["claude_code"].rollouts, totals["claude_code"].exact, totals["claude_code"].checked) == (
        2,
        8,
        14,
    )
    assert totals["claude_code"].breaks_per_rollout == 3.0
    table = fidelity_table(totals.items()).splitlines()
    assert table[1].split()[:9] == ["claude_code", "2", "0", "16", "0", "14", "8", "0.571", "3.00"]

    steps = StepFidelity()
    assert steps.add(1, fidelities[0]) is None and steps.add(None, fidelities[1]) is None
    assert steps.add(0, fidelities[2]) is None  # a late rollout of an earlier step joins the current one
    ended = steps.add(2, fidelities[0])
    assert ended is not None and ended.startswith("token fidelity of step 1:")
    assert [line.split()[:2] for line in ended.splitlines()[2:]] == [["claude_code", "2"], ["openclaw", "1"]]
    assert steps.step == 2 and len(steps.fidelities) == 1
