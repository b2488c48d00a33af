"""training/configs/agent_loops.yaml as veRL reads it, and its entry instantiated the way veRL's rollout
workers do (hydra, with the keyword arguments every AgentLoop receives)."""

from pathlib import Path
from typing import Any

CONFIGS = Path(__file__).parents[2] / "training" / "configs"


def agent_loop_entry() -> Any:  # noqa: ANN401 (an OmegaConf node)
    from omegaconf import OmegaConf

    (entry,) = OmegaConf.load(CONFIGS / "agent_loops.yaml")
    return entry


def instantiate_agent_loop(entry: Any) -> Any:  # noqa: ANN401
    import hydra
    from omegaconf import OmegaConf
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap, ToolListWrap

    return hydra.utils.instantiate(
        config=entry,
        trainer_config=DictConfigWrap(OmegaConf.create({"actor_rollout_ref": {"rollout": {}}})),
        server_manager=None,
        tokenizer=None,
        processor=None,
        hf_model_type=None,
        dataset_cls=None,
        data_config=DictConfigWrap(OmegaConf.create({})),
        tools=ToolListWrap([]),
    )


def forge_agent_loop(rollout: dict[str, Any], **options: Any) -> Any:  # noqa: ANN401
    """A ForgeProxyAgentLoop with `rollout` as its actor_rollout_ref.rollout config, built as veRL's
    workers build an AgentLoop here (no server manager, tokenizer, processor or model type)."""
    from omegaconf import OmegaConf
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap

    from forge_eval.training.verl.agent_loop import ForgeProxyAgentLoop

    config = DictConfigWrap(OmegaConf.create({"actor_rollout_ref": {"rollout": rollout}}))
    data_config = DictConfigWrap(OmegaConf.create({}))
    return ForgeProxyAgentLoop(config, None, None, None, None, data_config, **options)
