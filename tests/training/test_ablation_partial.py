"""`forge-eval ablate partial`: a short ablation end to end, the verdict against its data, bad input.

Everything runs for real, as in test_ablation.py: the tiny policy behind the recording proxy, the plan-act
harness, injected cuts, the training core's partial-rollout policies. Tiny settings check the machinery;
the verdict's reading of the pair statistics is checked on made-up runs of known outcome.
"""

import json

import numpy as np
import pytest
from click.testing import CliRunner

from forge_eval._cli.main import cli
from forge_eval.training.ablation import RunConfig
from forge_eval.training.ablation._harness import draw_cut
from forge_eval.training.ablation._partial import keeping_sentence
from forge_eval.training.ablation._run import RUN_FILE, Run
from forge_eval.training.ablation._summary import summarize

pytest.importorskip("torch", reason="torch is installed by scripts/setup.d/40-verl.sh (CI does)")

TINY = ["--steps", "2", "--eval-every", "1", "--heldout", "3", "--tasks-per-step", "2", "--group-size", "3"]
TINY_RUN = {"steps": 2, "eval_every": 1, "n_heldout": 3, "tasks_per_step": 2, "group_size": 3}


def _invoke(*args: str):
    return CliRunner().invoke(cli, ["ablate", "partial", *args], catch_exceptions=False)


@pytest.mark.slow
def test_short_partial_ablation_runs_and_its_verdict_follows_from_its_data(tmp_path):
    out = tmp_path / "partial"
    args = ["--seeds", "2", *TINY, "--failure-rates", "0.5", "--resamples", "200", "--out", str(out)]
    result = _invoke(*args, "--jobs", "2")
    assert result.exit_code == 0, result.output
    data = json.loads((out / "partial-ablation.json").read_text())
    assert data["kind"] == "partial-ablation" and list(data["by_failure_rate"]) == ["0.5"]
    summary = data["by_failure_rate"]["0.5"]
    assert list(summary["variants"]) == ["discard", "zero", "mask", "carry"]
    # every policy of a seed: the same weights, data order and injected failures
    by_seed: dict[int, set] = {}
    for run in data["runs"]:
        by_seed.setdefault(run["config"]["seed"], set()).add((run["init_hash"], run["data_hash"]))
    assert all(len(h) == 1 for h in by_seed.values()) and by_seed[0] != by_seed[1]
    counts = summary["rollouts"]
    assert len({c["cut"] for c in counts.values()}) == 1 and counts["discard"]["cut"] > 0
    # what each policy did with them: discard loses every cut rollout from its group, zero and mask none
    assert counts["discard"]["actions"] == {"discard": counts["discard"]["cut"]}
    assert counts["discard"]["members_lost"] == counts["discard"]["cut"]
    assert (
        counts["zero"]["actions"] == {"zero": counts["zero"]["cut"]} and counts["zero"]["members_lost"] == 0
    )
    assert (
        counts["mask"]["actions"] == {"mask": counts["mask"]["cut"]} and counts["mask"]["groups_short"] == 0
    )
    assert counts["carry"]["actions"].get("carry", 0) > 0 and counts["carry"]["resumed"] > 0
    # the verdict follows from the data: two runs per policy can tell nothing apart, and it says so
    assert summary["inference"]["runs_needed"] == 9 and not summary["inference"]["enough_runs"]
    assert not any(any(p["told_apart"].values()) for p in summary["pairs"])
    assert "at least 9 runs per variant are needed" in result.output
    assert "zero is not told apart" in summary["verdict"]["keeping"] and "helps" not in result.output
    for name, variant in summary["variants"].items():  # the printed per-seed values are the data's
        seeds = " ".join(f"{100 * x:3.0f}" for x in variant["final_success"]["per_seed"].values())
        assert f"{name:<8} final held-out success per seed (%): {seeds};" in result.output
    assert "(95% Wilson over runs)" in result.output
    # resumes: nothing left to train, the same numbers
    again = _invoke(*args, "--jobs", "2")
    assert " run(s) (" not in again.output
    assert (
        json.loads((out / "partial-ablation.json").read_text())["by_failure_rate"] == data["by_failure_rate"]
    )


def _made_up_runs(finals: list[float]) -> list[dict]:
    """Runs with the given final held-out success (every task alike), enough for `summarize`."""
    tasks = [f"t{k}" for k in range(4)]
    return [
        {
            "config": {"seed": seed},
            "eval": [
                {"step": s, "success": v, "reward": v, "per_task": dict.fromkeys(tasks, v)}
                for s, v in ((0, 0.0), (4, final))
            ],
            "train": [{"step": 0, "reward": 0.5, "internal_entropy": 1.0}],
            "seconds_per_step": 1.0,
        }
        for seed, final in enumerate(finals)
    ]


def test_keeping_sentence_reads_help_and_hurt_off_the_pair_statistics():
    rng = np.random.default_rng(0)
    base = list(rng.uniform(0.4, 0.6, 9))
    runs = {
        "discard": _made_up_runs(base),
        "zero": _made_up_runs([b - 0.3 for b in base]),  # worse on every seed
        "mask": _made_up_runs([b + 0.3 for b in base]),  # better on every seed
        "carry": _made_up_runs([b + (0.01 if k % 2 else -0.01) for k, b in enumerate(base)]),  # a wash
    }
    summary = summarize(runs, n_resamples=200)
    sentence = keeping_sentence(summary, 0.3)
    assert sentence.startswith("At a failure rate of 30%, against discard:")
    assert "zero hurts (final held-out success -30.0 points)" in sentence
    assert "mask helps (final held-out success +30.0 points)" in sentence
    assert "carry is not told apart" in sentence
    told = {(p["a"], p["b"]): p["told_apart"]["final"] for p in summary["pairs"]}
    assert told["discard", "zero"] and told["discard", "mask"] and not told["discard", "carry"]


def test_cuts_are_seeded_and_shared_by_every_policy():
    cuts = [draw_cut(0.3, (1, 2, 3), 5, step, k) for step in range(4) for k in range(128)]
    assert cuts == [draw_cut(0.3, (1, 2, 3), 5, step, k) for step in range(4) for k in range(128)]
    share = sum(c is not None for c in cuts) / len(cuts)
    assert 0.25 < share < 0.35  # binomial(512, 0.3): sd 0.02
    assert {c.after for c in cuts if c} == {1, 2, 3} and {c.kind for c in cuts if c} == {"timeout", "crash"}
    assert draw_cut(0.0, (1, 2, 3), 5, 0, 0) is None


@pytest.mark.slow
def test_carry_run_resumes_exactly_after_an_interrupt(tmp_path, monkeypatch):
    """The carried rollouts' state and held members live in the checkpoint: a resumed run agrees."""
    config = RunConfig(variant="masked", seed=3, partial="carry", failure_rate=0.5, **TINY_RUN)
    first = Run(config, tmp_path / "a").execute()
    assert first["train"][1]["partial"]["resumed"] > 0  # step 0 carried rollouts into step 1
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
    assert second["final_hash"] == first["final_hash"] and second["train"] == first["train"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--policies", "discard,keep"], "unknown partial-rollout policy 'keep'. Valid"),
        (["--policies", "zero,zero"], "distinct"),
        (["--failure-rates", "1"], "--failure-rates must lie in [0, 1)"),
        (["--failure-rates", "0.3,abc"], "--failure-rates takes comma-separated float values"),
        (["--failure-points", "0,4"], "--failure-points must be distinct call counts in 1..3"),
        (["--credit", "bogus"], "unknown credit variant 'bogus'"),
        (["--group-size", "1"], "at least 2"),
    ],
)
def test_bad_settings_are_usage_errors(tmp_path, args, message):
    result = CliRunner().invoke(cli, ["ablate", "partial", *args, "--out", str(tmp_path / "x")])
    assert getattr(result.exception, "exit_code", None) == 2, result.output
    assert message in str(result.exception)
    assert not (tmp_path / "x").exists()  # refused before any work


def test_the_commands_defaults_are_the_ablations_defaults():
    from forge_eval._cli.ablate import partial
    from forge_eval.training.ablation import PartialAblationConfig

    options = {p.name: p.default for p in partial.params}
    defaults = PartialAblationConfig()
    for name in ("seeds", "seed_base", "steps", "policy", "tasks_per_step", "group_size", "eval_every"):
        assert options[name] == getattr(defaults, name), name
    assert options["n_heldout"] == defaults.n_heldout and options["credit"] == defaults.credit
    assert tuple(options["policies"].split(",")) == defaults.policies
    assert tuple(float(r) for r in options["failure_rates"].split(",")) == defaults.failure_rates
    assert tuple(int(p) for p in options["failure_points"].split(",")) == defaults.failure_points
