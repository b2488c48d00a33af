"""Training: recording proxy, records, trajectories, credit, advantages, veRL adapter, rollout backends.

The training core reads the proxy's call records and turns them into a training batch:
`build_trajectory` (ordered calls, exact token-prefix chains, role tags) -> `discard_reason` (failure
policy) -> a `PartialPolicy` from `PARTIAL_POLICIES` (rollouts cut short) -> `grpo_advantages` (per task
group) -> a `CreditVariant` from `CREDIT_VARIANTS` (which calls learn) -> `build_batch` (token rows).
The veRL AgentLoop is `forge_eval.training.verl.agent_loop`.
"""

from forge_eval.training.advantages import GroupAdvantages, grpo_advantages
from forge_eval.training.batch import BatchStats, TrainingBatch, TrainingRow, build_batch, rollout_rows
from forge_eval.training.credit import CREDIT_VARIANTS, CallCredit, CreditVariant, credit_variant
from forge_eval.training.failures import DiscardReport, discard_reason
from forge_eval.training.fidelity import (
    BREAK_CAUSES,
    Fidelity,
    by_harness,
    fidelity_table,
    records_fidelity,
    rollout_fidelity,
)
from forge_eval.training.partial import PARTIAL_POLICIES, PartialPolicy, partial_policy
from forge_eval.training.trajectories import (
    MergeStats,
    Trajectory,
    TrajectoryCall,
    build_trajectory,
    read_rollout_jsonl,
)

__all__ = [
    "BREAK_CAUSES",
    "CREDIT_VARIANTS",
    "PARTIAL_POLICIES",
    "BatchStats",
    "CallCredit",
    "CreditVariant",
    "DiscardReport",
    "Fidelity",
    "GroupAdvantages",
    "MergeStats",
    "PartialPolicy",
    "TrainingBatch",
    "TrainingRow",
    "Trajectory",
    "TrajectoryCall",
    "build_batch",
    "by_harness",
    "build_trajectory",
    "credit_variant",
    "discard_reason",
    "fidelity_table",
    "grpo_advantages",
    "partial_policy",
    "read_rollout_jsonl",
    "records_fidelity",
    "rollout_fidelity",
    "rollout_rows",
]
