"""An ablation's statistics from its runs: curves, success per run, run-level differences, a verdict.

The unit is the training run (`_inference`): a variant's success and a pair's difference are computed per
seed and summarised over seeds; a pair is told apart only when its run-level t interval, taken at the
Bonferroni-corrected level, excludes 0 and its exact sign-flip p, Bonferroni-corrected, is at most 0.05.
A variant's own success gets a Wilson interval over runs, which stays inside [0, 100] (`_inference`).
The family corrected together is every (pair, metric) of one loss aggregation mode: final held-out
success and the area under the held-out success curve, for each pair of variants.
"""

import itertools
from typing import Any

import numpy as np
from scipy import stats

from forge_eval.analysis import N_RESAMPLES, RANDOM_STATE
from forge_eval.training.ablation._inference import ALPHA, RunLevel, run_level, runs_needed

METRICS = {"final": "final held-out success", "auc": "area under the held-out success curve"}
LEARNED = 0.8  # a run "learned the task" at this final held-out success


def _cells(runs: list[dict[str, Any]], metric: str) -> tuple[list[str], np.ndarray]:
    """(seeds, cells seeds x held-out tasks): a task's greedy success after training ("final") or its
    mean over the checkpoints after step 0 ("auc", the area under the learning curve)."""
    tasks = list(runs[0]["eval"][-1]["per_task"])
    seeds, rows = [], []
    for run in runs:
        evals = run["eval"]
        later = [e for e in evals if e["step"] > 0] or evals
        picked = [evals[-1]] if metric == "final" else later
        rows.append([float(np.mean([e["per_task"][t] for e in picked])) for t in tasks])
        seeds.append(str(run["config"]["seed"]))
    return seeds, np.asarray(rows)


def _curve(runs: list[dict[str, Any]], part: str, key: str) -> dict[str, Any]:
    """Every seed's curve of `key` per step of `part` ("eval" or "train"), their mean, and a pointwise
    95% t interval over runs (the band; it needs two runs)."""
    steps = [e["step"] for e in runs[0][part]]
    values = np.array(
        [[e.get(key) if e.get(key) is not None else np.nan for e in r[part]] for r in runs], dtype=float
    )
    mean, low, high = [], [], []
    for col in values.T:
        col = col[~np.isnan(col)]
        m = float(col.mean()) if col.size else None
        half = (
            float(stats.t.ppf(0.975, col.size - 1) * col.std(ddof=1) / np.sqrt(col.size))
            if col.size > 1
            else None
        )
        mean.append(m)
        low.append(None if half is None or m is None else m - half)
        high.append(None if half is None or m is None else m + half)
    per_seed = {
        str(r["config"]["seed"]): [None if np.isnan(v) else float(v) for v in row]
        for r, row in zip(runs, values, strict=True)
    }
    return {"step": steps, "mean": mean, "low": low, "high": high, "per_seed": per_seed}


def _points(value: float) -> str:
    return f"{100 * value:+.1f}"


def _interval_text(d: dict[str, Any]) -> str:
    level = f"{100 * d['level']:.1f}%"
    t = "n/a" if d["t_low"] is None else f"[{_points(d['t_low'])}, {_points(d['t_high'])}]"
    return (
        f"{_points(d['estimate'])} points, {level} t interval {t}, crossed bootstrap "
        f"[{_points(d['boot_low'])}, {_points(d['boot_high'])}], sign-flip p = {d['p']:.3g} "
        f"(corrected {d['p_adjusted']:.3g})"
    )


def _seed_signs(d: dict[str, Any]) -> str:
    """How many seeds went which way; with ties, what the seeds that carry a sign can show at best."""
    values = list(d["per_seed"].values())
    up, down = sum(v > 1e-12 for v in values), sum(v < -1e-12 for v in values)
    text = f"{up} of {len(values)} seeds higher, {down} lower"
    tied = len(values) - up - down
    if tied and d.get("smallest_p_adjusted") is not None:
        smallest = d["smallest_p_adjusted"]
        text += (
            f", {tied} tied: only {up + down} seeds carry a sign, so the smallest corrected p they allow is "
            f"{smallest:.3g}"
        )
        if smallest > ALPHA:
            text += ", and no outcome of these seeds could tell the pair apart"
    return text


def _told_apart(d: dict[str, Any]) -> bool:
    """Run-level t interval at the corrected level excludes 0 and the corrected sign-flip p <= alpha."""
    excludes = d["t_low"] is not None and (d["t_low"] > 0 or d["t_high"] < 0)
    return excludes and d["p_adjusted"] is not None and d["p_adjusted"] <= ALPHA


def _pair_sentence(a: str, b: str, entry: dict[str, Any], enough: bool) -> str:
    final, auc = entry["final"], entry["auc"]
    if entry["told_apart"]["final"]:
        better, worse = (b, a) if final["estimate"] > 0 else (a, b)
        return (
            f"{better} beats {worse} on final held-out success ({b} - {a}: {_interval_text(final)}; "
            f"{_seed_signs(final)})."
        )
    if entry["told_apart"]["auc"]:
        sooner = b if auc["estimate"] > 0 else a
        return (
            f"{a} and {b} are not told apart on final held-out success ({b} - {a}: "
            f"{_interval_text(final)}), but {sooner} learned sooner (area under the curve, {b} - {a}: "
            f"{_interval_text(auc)})."
        )
    text = f"{a} and {b} are not told apart ({b} - {a}, final: {_interval_text(final)}; {_seed_signs(final)})"
    need = final.get("runs_for_power")
    if enough and need:
        text += (
            f"; with runs like these (their spread and share of ties) about {need} runs per variant would "
            "tell a difference this large apart 80% of the time"
        )
    return text + "."


def summarize(
    runs_by_variant: dict[str, list[dict[str, Any]]],
    *,
    n_resamples: int = N_RESAMPLES,
    random_state: int = RANDOM_STATE,
) -> dict[str, Any]:
    """Statistics of one ablation (one loss aggregation mode): per variant its curves and run-level
    success; per pair of variants the run-level differences; a plain-language verdict."""
    pairs_ab = list(itertools.combinations(runs_by_variant, 2))
    comparisons = max(1, len(pairs_ab) * len(METRICS))
    level = 1 - ALPHA / comparisons
    n_runs = min(len(runs) for runs in runs_by_variant.values())
    needed = runs_needed(comparisons)
    variants: dict[str, Any] = {}
    cells: dict[str, dict[str, tuple[list[str], np.ndarray]]] = {}
    for name, runs in runs_by_variant.items():
        cells[name] = {metric: _cells(runs, metric) for metric in METRICS}
        entropy = [
            np.nanmean(
                [m["internal_entropy"] for m in r["train"][-5:] if m.get("internal_entropy") is not None]
                or [np.nan]
            )
            for r in runs
        ]
        success: dict[str, RunLevel] = {
            metric: run_level(cells[name][metric][1], cells[name][metric][0], 0.95, n_resamples=n_resamples)
            for metric in METRICS
        }
        finals = list(success["final"].per_seed.values())
        variants[name] = {
            "final_success": success["final"].to_dict(),
            "auc_success": success["auc"].to_dict(),
            "seeds_learned": sum(v >= LEARNED for v in finals),
            "internal_entropy_final": float(np.nanmean(entropy)) if not np.all(np.isnan(entropy)) else None,
            "seconds_per_step": float(np.mean([r["seconds_per_step"] for r in runs])),
            "curves": {
                "heldout_success": _curve(runs, "eval", "success"),
                "heldout_reward": _curve(runs, "eval", "reward"),
                "train_reward": _curve(runs, "train", "reward"),
                "internal_entropy": _curve(runs, "train", "internal_entropy"),
            },
        }
    enough = n_runs >= needed
    pairs, sentences = [], []
    for a, b in pairs_ab:
        entry: dict[str, Any] = {"a": a, "b": b}
        for metric in METRICS:
            seeds_a, cells_a = cells[a][metric]
            seeds_b, cells_b = cells[b][metric]
            common = [s for s in seeds_a if s in seeds_b]
            difference = (
                cells_b[[seeds_b.index(s) for s in common]] - cells_a[[seeds_a.index(s) for s in common]]
            )
            entry[metric] = run_level(
                difference,
                common,
                level,
                n_resamples=n_resamples,
                random_state=random_state,
                comparisons=comparisons,
            ).to_dict()
        entry["told_apart"] = {metric: _told_apart(entry[metric]) for metric in METRICS}
        pairs.append(entry)
        sentences.append(_pair_sentence(a, b, entry, enough))
    told = [p for p in pairs if any(p["told_apart"].values())]
    family = f"{len(pairs_ab)} pair(s) x {len(METRICS)} metrics = {comparisons} comparisons"
    if not pairs:
        headline = "Only one variant was trained: there is nothing to compare."
    elif not enough:
        smallest = 2.0 ** (1 - n_runs)
        headline = (
            f"{n_runs} run(s) per variant cannot show a difference at 95% after the Bonferroni correction "
            f"over {family} (the smallest sign-flip p with {n_runs} runs is {smallest:.3g}, above "
            f"{ALPHA / comparisons:.3g}); at least {needed} runs per variant are needed."
        )
    elif told:
        headline = (
            f"{len(told)} of {len(pairs)} pairs of variants are told apart over {n_runs} runs per variant."
        )
    else:
        headline = f"No pair of variants is told apart over {n_runs} runs per variant."
    method = (
        f"Unit: the training run ({n_runs} seeds per variant; each seed gives every variant the same "
        f"initial weights and data order). Differences are per seed (mean over "
        f"{next(iter(cells.values()))['final'][1].shape[1]} held-out tasks), summarised over seeds: mean, "
        f"Student t interval over seeds, crossed bootstrap over seeds and tasks ({n_resamples} resamples), "
        f"exact sign-flip p over seeds (a tied seed carries no sign: with k seeds that differ the smallest "
        f"p is 2^(1-k)). Multiplicity: Bonferroni over {family}, so pair intervals are at "
        f"the {100 * level:.1f}% level and p values are multiplied by {comparisons}; a pair is told apart "
        "when its t interval excludes 0 and its corrected p is at most 0.05. A variant's success: the mean "
        "over runs with a 95% Wilson interval over runs (inside [0, 100]); runs for 80% power: the "
        "decision rule simulated on runs drawn from the observed per-seed differences, ties included."
    )
    return {
        "variants": variants,
        "pairs": pairs,
        "inference": {
            "unit": "training run (seed)",
            "n_runs": n_runs,
            "comparisons": comparisons,
            "correction": f"Bonferroni over {family}",
            "level": level,
            "runs_needed": needed,
            "enough_runs": enough,
        },
        "verdict": {
            "headline": headline,
            "pairs": sentences,
            "learned": _learned_sentence(variants, n_runs),
            "internal_calls": _internal_calls(variants),
            "method": method,
        },
    }


def _learned_sentence(variants: dict[str, Any], n_runs: int) -> str:
    parts = ", ".join(f"{name} {v['seeds_learned']}/{n_runs}" for name, v in variants.items())
    return f"Runs reaching {LEARNED:.0%} final held-out success: {parts}."


def _internal_calls(variants: dict[str, Any]) -> list[str]:
    starts = [
        next((m for m in v["curves"]["internal_entropy"]["mean"] if m is not None), None)
        for v in variants.values()
    ]
    ends = {name: v["internal_entropy_final"] for name, v in variants.items()}
    if None in starts or None in ends.values():
        return []
    # one sentence for all variants: the ones that do not train these calls drift too, through the
    # weights every call shares, so only the comparison says what training them did
    return [
        "Planner and subagent calls cannot change the reward; the surprisal of the tokens the policy "
        f"says in them went from {np.mean(starts):.2f} nats at the start (uniform: 2.48) to "
        + ", ".join(f"{end:.2f} under {name}" for name, end in ends.items())
        + "."
    ]
