"""Parquet export in veRL's dataset schema, and the example GPU config against veRL's own config tree."""

import json
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser

from forge_eval._errors import ForgeError
from forge_eval.training.verl import AGENT_NAME, export_parquet, task_rows

CONFIGS = Path(__file__).parents[2] / "training" / "configs"
SAMPLES = [
    Sample(id="t1", input="create hello.txt containing hi", target="hi", metadata={"difficulty": 1}),
    Sample(
        id=2,
        input=[ChatMessageSystem(content="be brief"), ChatMessageUser(content="list files")],
        target=["a", "b"],
        metadata={"service": "files", "tags": ["x"]},
    ),
]


def test_rows_follow_the_verl_schema_and_round_trip(tmp_path):
    path = export_parquet(task_rows("forgelab", SAMPLES, harness="claude_code"), tmp_path / "d" / "t.parquet")
    df = pd.read_parquet(path)
    assert list(df.columns) == [
        "data_source",
        "agent_name",
        "prompt",
        "ability",
        "reward_model",
        "extra_info",
    ]
    assert set(df.agent_name) == {AGENT_NAME} and set(df.data_source) == {"forgelab"}
    assert [dict(p) for p in df.prompt[1]] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "list files"},
    ]
    assert df.reward_model[1]["ground_truth"] == '["a", "b"]'
    task = json.loads(df.extra_info[1]["forge_task"])
    assert task == {
        "benchmark": "forgelab",
        "task_id": "2",
        "harness": "claude_code",
        "metadata": {"service": "files", "tags": ["x"]},
    }
    assert (df.extra_info[0]["split"], df.extra_info[0]["index"]) == ("train", 0)


def test_export_errors_are_messages(tmp_path):
    with pytest.raises(ForgeError, match="no tasks to export"):
        export_parquet([], tmp_path / "x.parquet")
    with pytest.raises(ForgeError, match="sample 0 of forgelab has no id"):
        task_rows("forgelab", [Sample(input="x")], harness="react")


def _leaves(node, prefix=()):
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, (*prefix, key))
    else:
        yield prefix


@pytest.mark.verl
def test_example_gpu_config_keys_exist_in_verl_and_compose(tmp_path):
    import verl
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    ours = OmegaConf.to_container(OmegaConf.load(CONFIGS / "grpo_gpu.yaml"))
    generated = Path(verl.__file__).parent / "trainer" / "config" / "_generated_ppo_trainer.yaml"
    theirs = OmegaConf.to_container(OmegaConf.load(generated))
    for path in _leaves({k: v for k, v in ours.items() if k not in ("hydra", "defaults")}):
        node = theirs
        for key in path:
            assert isinstance(node, dict) and key in node, f"{'.'.join(path)} is not a veRL 0.9.1 config key"
            node = node[key]
    with initialize_config_dir(config_dir=str(CONFIGS), version_base=None):
        cfg = compose(config_name="grpo_gpu")
    assert cfg.algorithm.adv_estimator == "grpo" and cfg.trainer.use_v1
    assert cfg.actor_rollout_ref.rollout.agent.agent_loop_config_path == "training/configs/agent_loops.yaml"
    assert (
        cfg.actor_rollout_ref.rollout.response_length == 32768
    )  # interpolated from data.max_response_length


@pytest.mark.verl
def test_verl_rlhf_dataset_reads_the_export(tmp_path):
    from omegaconf import OmegaConf
    from verl.utils.dataset.rl_dataset import RLHFDataset

    path = export_parquet(task_rows("forgelab", SAMPLES, harness="codex"), tmp_path / "t.parquet")
    config = OmegaConf.create({"filter_overlong_prompts": False, "cache_dir": str(tmp_path / "cache")})
    dataset = RLHFDataset(str(path), tokenizer=None, config=config)
    assert len(dataset) == 2
    row = dataset[1]
    assert row["agent_name"] == AGENT_NAME and row["index"] == 1 and row["tools_kwargs"] == {}
    assert row["raw_prompt"][-1]["content"] == "list files"
    assert json.loads(row["extra_info"]["forge_task"])["harness"] == "codex"
