"""The credit ablation: does Eq. (1)'s broadcast credit matter? (`forge-eval ablate credit`)

`run_ablation` trains every credit variant (`broadcast`, `masked`, `terminal`) from the same initial
weights, seeds and data order: a small transformer (or the pretrained SmolLM2-135M) acting in the
`plan-act` harness (a planner call and a reviewer-subagent call that never touch the environment, then
`set` actions), every call through the real recording proxy, rebuilt by the training core
(trajectories, role tags, credit, GRPO). `replay` reads
proxy records of real harness runs and reports, per variant, where the gradient weight would land.
`write_verl_configs` writes the GPU (veRL) configs of the variants. `run_partial_ablation`
(`forge-eval ablate partial`) trains the partial-rollout policies under injected failures instead.
"""

from forge_eval.training.ablation._experiment import (
    ABLATION_FILE,
    ABLATION_HARNESSES,
    AblationConfig,
    run_ablation,
)
from forge_eval.training.ablation._partial import (
    PARTIAL_ABLATION_FILE,
    PartialAblationConfig,
    run_partial_ablation,
)
from forge_eval.training.ablation._policies import POLICIES
from forge_eval.training.ablation._replay import REPLAY_FILE, replay
from forge_eval.training.ablation._run import RunConfig
from forge_eval.training.ablation._verl import write_verl_configs

__all__ = [
    "ABLATION_FILE",
    "ABLATION_HARNESSES",
    "PARTIAL_ABLATION_FILE",
    "POLICIES",
    "REPLAY_FILE",
    "AblationConfig",
    "PartialAblationConfig",
    "RunConfig",
    "replay",
    "run_partial_ablation",
    "run_ablation",
    "write_verl_configs",
]
