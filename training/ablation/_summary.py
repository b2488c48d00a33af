"""An ablation's statistics from its runs: curves, final success with CIs, paired differences, verdict.

Cells are (held-out task, seed): a task's greedy success after training with that seed. Intervals come
from the project's two-level bootstrap (`forge_eval.analysis`), paired differences from
`paired_difference` on the same cells, so every variant is compared on the same tasks and seeds.
"""

import itertools
from typing import Any

import numpy as np
import pandas as pd

from forge_eval.analysis import BootstrapResult, hierarchical_bootstrap, paired_difference


def _cells(runs: list[dict[str, Any]], value: str) -> pd.DataFrame:
    """One row per (held-out task, seed): success at the last checkpoint ("final") or its mean over the
    checkpoints after step 0 ("auc", the area under the learning curve)."""
    rows = []
    for run in runs:
        evals = run["eval"]
        later = [e for e in evals if e["step"] > 0] or evals
        for task in evals[-1]["per_task"]:
            v = (
                evals[-1]["per_task"][task]
                if value == "final"
                else float(np.mean([e["per_task"][task] for e in later]))
            )
            rows.append({"task_id": task, "seed": run["config"]["seed"], "value": v})
    return pd.DataFrame(rows)


def _interval(result: BootstrapResult) -> dict[str, Any]:
    return {
        "estimate": result.estimate,
        "ci_low": result.ci_low,
        "ci_high": result.ci_high,
        "n_tasks": result.n_tasks,
        "n_seeds": result.n_seeds,
        "estimator": result.estimator,
    }


def _curve(runs: list[dict[str, Any]], part: str, key: str) -> dict[str, list[float | None]]:
    """Mean and min/max band over seeds of `key` per step of `part` ("eval" or "train")."""
    steps = [e["step"] for e in runs[0][part]]
    values = np.array(
        [[e.get(key) if e.get(key) is not None else np.nan for e in r[part]] for r in runs], dtype=float
    )
    mean = [None if np.all(np.isnan(col)) else float(np.nanmean(col)) for col in values.T]
    low = [None if np.all(np.isnan(col)) else float(np.nanmin(col)) for col in values.T]
    high = [None if np.all(np.isnan(col)) else float(np.nanmax(col)) for col in values.T]
    return {"step": steps, "mean": mean, "low": low, "high": high}


def _span(d: dict[str, Any]) -> str:
    est, lo, hi = (100 * d[k] for k in ("estimate", "ci_low", "ci_high"))
    return f"{est:+.1f} points, 95% CI [{lo:+.1f}, {hi:+.1f}]"


def _apart(d: dict[str, Any]) -> bool:
    """The interval of a paired difference excludes 0."""
    return d["ci_low"] > 0 or d["ci_high"] < 0


def _pair_sentence(a: str, b: str, entry: dict[str, Any]) -> str:
    """One pair in words: told apart at the end of training, or only over the whole learning curve (the
    area under it: one variant learned sooner, the other caught up), or not at all."""
    final, auc = entry["final"], entry["auc"]
    if _apart(final):
        better, worse = (b, a) if final["ci_low"] > 0 else (a, b)
        seeds = (
            "every seed agrees"
            if entry["seeds_agree"]
            else "but the seeds disagree in sign, so treat it with care"
        )
        return f"{better} beats {worse} on held-out success ({b} - {a}: {_span(final)}; {seeds})."
    if _apart(auc):
        sooner = b if auc["ci_low"] > 0 else a
        return (
            f"{a} and {b} end level on held-out success ({b} - {a}: {_span(final)}), but {sooner} learned "
            f"sooner (area under the held-out success curve, {b} - {a}: {_span(auc)})."
        )
    return f"{a} and {b} cannot be told apart ({b} - {a}: {_span(final)}; the interval includes 0)."


def summarize(
    runs_by_variant: dict[str, list[dict[str, Any]]], *, n_resamples: int = 10_000, random_state: int = 0
) -> dict[str, Any]:
    """Statistics of an ablation: per variant its curves and final/AUC success with CIs; per pair of
    variants the paired differences; a plain-language verdict."""
    variants: dict[str, Any] = {}
    cells = {}
    for name, runs in runs_by_variant.items():
        cells[name] = {kind: _cells(runs, kind) for kind in ("final", "auc")}
        entropy = [
            np.nanmean(
                [m["internal_entropy"] for m in r["train"][-5:] if m.get("internal_entropy") is not None]
                or [np.nan]
            )
            for r in runs
        ]
        variants[name] = {
            "final_success": _interval(
                hierarchical_bootstrap(
                    cells[name]["final"], n_resamples=n_resamples, random_state=random_state
                )
            ),
            "auc_success": _interval(
                hierarchical_bootstrap(cells[name]["auc"], n_resamples=n_resamples, random_state=random_state)
            ),
            "final_success_per_seed": {str(r["config"]["seed"]): r["eval"][-1]["success"] for r in runs},
            "internal_entropy_final": float(np.nanmean(entropy)) if not np.all(np.isnan(entropy)) else None,
            "seconds_per_step": float(np.mean([r["seconds_per_step"] for r in runs])),
            "curves": {
                "heldout_success": _curve(runs, "eval", "success"),
                "heldout_reward": _curve(runs, "eval", "reward"),
                "train_reward": _curve(runs, "train", "reward"),
                "internal_entropy": _curve(runs, "train", "internal_entropy"),
            },
        }
    pairs = []
    sentences = []
    for a, b in itertools.combinations(runs_by_variant, 2):
        entry: dict[str, Any] = {"a": a, "b": b}
        for kind in ("final", "auc"):
            paired = paired_difference(
                cells[a][kind], cells[b][kind], n_resamples=n_resamples, random_state=random_state
            )
            entry[kind] = _interval(paired.difference) | {"n_paired": paired.n_paired}
        per_seed_a = variants[a]["final_success_per_seed"]
        per_seed_b = variants[b]["final_success_per_seed"]
        signs = {np.sign(per_seed_b[s] - per_seed_a[s]) for s in per_seed_a if s in per_seed_b}
        entry["seeds_agree"] = len(signs) == 1 and 0 not in signs
        pairs.append(entry)
        sentences.append(_pair_sentence(a, b, entry))
    told = [p for p in pairs if _apart(p["final"]) or _apart(p["auc"])]
    n_seeds = len(next(iter(runs_by_variant.values())))
    n_tasks = len(next(iter(cells.values()))["final"]["task_id"].unique())
    if not pairs:
        headline = "Only one variant was trained: there is nothing to compare."
    elif told:
        headline = f"The data can tell {len(told)} of {len(pairs)} pairs of variants apart."
    else:
        headline = "The data cannot tell the variants apart at this scale."
    caveat = (
        f"Cells are {n_tasks} held-out tasks x {n_seeds} training seeds; the bootstrap resamples "
        "tasks and the "
        "seeds within them, so with few seeds the run-to-run variance of training is only partly in the "
        "intervals: check that the per-seed values agree before trusting a small difference."
    )
    notes = []
    if all(v["final_success"]["ci_high"] == 0 for v in variants.values()):
        notes.append(
            "No variant solved a held-out task at the end of training, so success cannot separate them yet: "
            "train for more steps (--steps) before reading the success comparison."
        )
    starts = [
        next((m for m in v["curves"]["internal_entropy"]["mean"] if m is not None), None)
        for v in variants.values()
    ]
    ends = {name: v["internal_entropy_final"] for name, v in variants.items()}
    if None not in starts and None not in ends.values():
        # one sentence for all variants: the ones that do not train these calls drift too, through the
        # weights every call shares, so only the comparison says what training them did
        notes.append(
            "Planner and subagent calls cannot change the reward; the surprisal of the tokens the policy "
            f"says in them went from {np.mean(starts):.2f} nats at the start (uniform: 2.48) to "
            + ", ".join(f"{end:.2f} under {name}" for name, end in ends.items())
            + "."
        )
    return {
        "variants": variants,
        "pairs": pairs,
        "verdict": {"headline": headline, "pairs": sentences, "internal_calls": notes, "caveat": caveat},
    }
