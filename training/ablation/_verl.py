"""`--trainer verl`: the three variants as veRL GRPO configs (GPU; never run on CI).

For each variant it writes an agent-loop registry entry (`ForgeProxyAgentLoop` with `credit: <variant>`)
and a Hydra config on top of training/configs/grpo_gpu.yaml that points at it, plus `run.sh` with one
command per variant and seed (`data.seed`). Everything else is shared, so the variants differ only in the
loop's credit, which veRL's V1 trainer applies through the response masks.
"""

import shlex
from pathlib import Path
from typing import Any

import yaml

from forge_eval.training.credit import credit_variant

CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs"


def _agent_loop_entry(variant: str) -> list[dict[str, Any]]:
    entries = yaml.safe_load((CONFIG_DIR / "agent_loops.yaml").read_text())
    return [dict(entry, credit=variant) for entry in entries]


def write_verl_configs(
    out: Path, variants: tuple[str, ...], seeds: list[int], harness: str, steps: int
) -> list[Path]:
    """Write the per-variant configs and `run.sh` under `out/verl/`; return the config paths."""
    for v in variants:
        credit_variant(v)  # unknown names list the valid ones
    root = out / "verl"
    root.mkdir(parents=True, exist_ok=True)
    base = yaml.safe_load((CONFIG_DIR / "grpo_gpu.yaml").read_text())
    written, lines = [], []
    for variant in variants:
        loops = root / f"agent_loops_{variant}.yaml"
        loops.write_text(yaml.safe_dump(_agent_loop_entry(variant), sort_keys=False))
        config = dict(base)
        config["actor_rollout_ref"] = {**base["actor_rollout_ref"]}
        rollout = {**base["actor_rollout_ref"]["rollout"]}
        rollout["agent"] = {**rollout["agent"], "agent_loop_config_path": str(loops)}
        config["actor_rollout_ref"]["rollout"] = rollout
        config["trainer"] = {
            **base["trainer"],
            "experiment_name": f"credit-{variant}",
            "total_training_steps": steps,
        }
        path = root / f"grpo_{variant}.yaml"
        path.write_text(
            f"# credit ablation, variant {variant}: training/configs/grpo_gpu.yaml with the "
            f"{variant} agent loop\n" + yaml.safe_dump(config, sort_keys=False)
        )
        written.append(path)
        for seed in seeds:
            lines.append(
                "python -m verl.trainer.main_ppo "
                + " ".join(
                    shlex.quote(a)
                    for a in (
                        "--config-path",
                        str(root),
                        "--config-name",
                        path.stem,
                        f"data.seed={seed}",
                        f"trainer.experiment_name=credit-{variant}-seed{seed}",
                        f"trainer.default_local_dir=checkpoints/credit-{variant}-seed{seed}",
                    )
                )
            )
    script = root / "run.sh"
    script.write_text(
        "#!/bin/sh\n# GPU only. Before: export the tasks (forge_eval.training.verl.export_parquet) "
        "for harness "
        f"{harness}, start the recording proxy and export FORGE_PROXY_ADMIN_KEY "
        "(training/configs/README.md).\n"
        "# Expected time: not measured (no GPU here). A run is total_training_steps x (slowest rollout\n"
        "# of a step + the update); with harness rollouts of 2-5 min on the 8-GPU grpo_gpu.yaml settings,\n"
        "# 100 steps take roughly 4-9 h per variant and seed (an estimate, not a measurement).\n"
        "set -e\n" + "\n".join(lines) + "\n"
    )
    script.chmod(0o755)
    return written
