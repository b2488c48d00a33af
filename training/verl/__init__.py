"""veRL integration: dataset export and AgentLoop outputs (no veRL import needed here).

The AgentLoop itself is `forge_eval.training.verl.agent_loop.ForgeProxyAgentLoop` (imports veRL); point
veRL at it with training/configs/agent_loops.yaml.
"""

from forge_eval.training.verl._outputs import check_verl_credit, output_fields
from forge_eval.training.verl.dataset import AGENT_NAME, export_parquet, task_rows

AGENT_LOOP_TARGET = "forge_eval.training.verl.agent_loop.ForgeProxyAgentLoop"

__all__ = [
    "AGENT_LOOP_TARGET",
    "AGENT_NAME",
    "check_verl_credit",
    "export_parquet",
    "output_fields",
    "task_rows",
]
