"""A trajectory as veRL AgentLoopOutput fields (plain dicts, so this module does not need veRL).

The V1 trainer computes GRPO itself from the rollout's last output and broadcasts it to the rollout's other
outputs, scaled by each output's response mask (reference rl-training.md §1.6). So the credit variant acts
here through the masks alone; the rows with no trainable token are left out, which also guarantees that the
last output is trainable (a masked last output would zero the whole rollout's advantage).
Each rollout is returned on its own, so nothing here can drop a task group that the failure policy left
with one survivor: V1's GRPO then gives that rollout mean 0 / std 1, i.e. its raw reward as advantage.
`forge_eval.training.build_batch(..., singletons="raw")` reproduces this; its default drops such groups.
Keep `rollout.n` large enough that lone survivors stay rare.
A partial rollout kept under `mask` is one output with an all-zero response mask: V1's GRPO counts its
reward (0) in the group's mean and std, and the mask gives its tokens no loss.
"""

from typing import Any

from forge_eval._errors import UsageError
from forge_eval.training.batch import rollout_rows, row_of
from forge_eval.training.credit import CallCredit, CreditVariant
from forge_eval.training.partial import with_reward
from forge_eval.training.trajectories import Trajectory


def check_verl_credit(credit: CreditVariant) -> None:
    """veRL V1 broadcasts one advantage per rollout; per-call discounting (gamma < 1) cannot pass through."""
    if credit.gamma != 1.0:
        raise UsageError(
            f"credit gamma {credit.gamma} cannot be trained with veRL's V1 GRPO broadcast, which gives "
            "every output of a rollout the same advantage",
            hint="use gamma = 1 with veRL (the Eq. 1 default), or forge_eval.training.batch.build_batch",
        )


def output_fields(
    trajectory: Trajectory,
    credit: CreditVariant,
    *,
    merge: bool = True,
    reward: float | None = None,
    learns: bool = True,
) -> list[dict[str, Any]]:
    """Keyword arguments of one `AgentLoopOutput` per trainable row, last call last.

    The reward is the verifier's (the rollout record's) unless the partial-rollout policy gives one
    (`reward`); it is set on every output, as V1 copies the final output's score to the others anyway,
    and `reward_extra_info` must exist on each for that copy. `learns=False` (a `mask`ed partial rollout)
    gives one output, the last call, with no trainable token: in its group's baseline, without loss.
    """
    check_verl_credit(credit)
    reward = trajectory.rollout.reward if reward is None else reward
    if reward is None:
        raise ValueError(
            f"rollout {trajectory.rollout.rollout_id} has no reward; the failure policy drops it"
        )
    trajectory = with_reward(trajectory, reward)
    credits = credit.assign(trajectory, reward)
    if not learns:  # the last call alone, every token masked
        last = len(trajectory.calls) - 1
        credits = [CallCredit(c.reward, c.scale, False) for c in credits]
        rows = [row_of(trajectory, [last], credits, 0.0)]
    else:
        rows, _ = rollout_rows(trajectory, credits, 1.0, merge=merge)
    versions = sorted(trajectory.policy_versions)
    extra: dict[str, Any] = {"reward_extra_info": {"forge_reward": reward}}
    if versions:
        extra |= {"min_global_steps": versions[0], "max_global_steps": versions[-1]}
    return [
        {
            "prompt_ids": row.prompt_ids.tolist(),
            "response_ids": row.response_ids.tolist(),
            "response_mask": row.response_mask.astype(int).tolist(),
            "response_logprobs": row.logprobs.tolist(),
            "reward_score": reward,
            "num_turns": 2 * len(row.call_ids),
            "extra_fields": {
                **extra,
                "forge_rollout_id": row.rollout_id,
                "forge_call_ids": ",".join(row.call_ids),
                "forge_roles": ",".join(row.roles),
            },
        }
        for row in rows
    ]
