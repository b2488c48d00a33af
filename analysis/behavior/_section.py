"""The report's "Behavior" section, drawn from `DIR/behavior.json` (written by `forge-eval analyze`).

Charts: tool-usage shares over all vs successful rollouts, the capabilities with their CIs, and with a
comparison the paired differences with CIs. Each number sits next to its definition.
"""

import html
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from forge_eval.reports import REPORT_SECTIONS, Section, svg_figure
from forge_eval.rundir import RunDir

BEHAVIOR_FILE = RunDir.BEHAVIOR
_MAX_TOOLS = 12


def _fmt(interval: dict[str, Any] | None) -> str:
    if interval and interval.get("not_measurable"):
        return interval["not_measurable"]
    if not interval or interval.get("estimate") is None:
        return "n/a"
    text = f"{interval['estimate']:.1f}"
    if interval.get("ci_low") is not None:
        text += f" [{interval['ci_low']:.1f}, {interval['ci_high']:.1f}]"
    return text


def _errors(intervals: list[dict[str, Any] | None]) -> list[list[float]]:
    low, high = [], []
    for item in intervals:
        estimate = (item or {}).get("estimate")
        has_ci = item is not None and estimate is not None and item.get("ci_low") is not None
        low.append(max(0.0, estimate - item["ci_low"]) if has_ci else 0.0)
        high.append(max(0.0, item["ci_high"] - estimate) if has_ci else 0.0)
    return [low, high]


def _value(item: dict[str, Any] | None) -> float:
    return float((item or {}).get("estimate") or 0.0)


def _share_chart(shares: dict[str, dict[str, Any]], name: str) -> str:
    tools = list(shares.get("all", {}))[:_MAX_TOOLS]

    def draw(fig: Figure) -> None:
        ax = fig.add_subplot()
        positions = range(len(tools))
        for offset, subset, color in ((-0.2, "all", "#4c72b0"), (0.2, "successful", "#55a868")):
            items = [shares.get(subset, {}).get(t) for t in tools]
            ax.barh(
                [p + offset for p in positions],
                [_value(i) for i in items],
                height=0.4,
                xerr=_errors(items),
                color=color,
                label=f"{subset} rollouts",
                capsize=2,
            )
        ax.set_yticks(list(positions), tools)
        ax.invert_yaxis()
        ax.set_xlabel("share of tool calls (%)")
        ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=2, frameon=False)

    return svg_figure(draw, figsize=(6.5, 0.45 * len(tools) + 1.5), name=name)


def _capability_chart(capabilities: dict[str, dict[str, Any]], titles: dict[str, str], name: str) -> str:
    names = list(capabilities)

    def draw(fig: Figure) -> None:
        ax = fig.add_subplot()
        items = [capabilities[n] for n in names]
        values = [_value(i) for i in items]
        ax.barh(range(len(names)), values, xerr=_errors(items), color="#8172b2", capsize=3)
        for row, item in enumerate(items):
            if (item or {}).get("not_measurable"):
                ax.text(1, row, "not measurable for this log", va="center", color="#777777")
            elif (item or {}).get("estimate") is None:
                ax.text(1, row, "n/a (no eligible rollouts)", va="center", color="#777777")
        ax.set_yticks(range(len(names)), [titles.get(n, n) for n in names])
        ax.invert_yaxis()
        ax.set_xlim(0, 100)
        ax.set_xlabel("0-100, with 95% CI")

    return svg_figure(draw, figsize=(6.5, 0.45 * len(names) + 1.0), name=name)


def _difference_chart(diffs: dict[str, dict[str, Any] | None], titles: dict[str, str], name: str) -> str:
    names = [n for n, d in diffs.items() if d]

    def draw(fig: Figure) -> None:
        ax = fig.add_subplot()
        items = [diffs[n] for n in names]
        values = [_value(i) for i in items]
        colors = ["#55a868" if v >= 0 else "#c44e52" for v in values]
        ax.barh(range(len(names)), values, xerr=_errors(items), color=colors, capsize=3)
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_yticks(range(len(names)), [titles.get(n, n) for n in names])
        ax.invert_yaxis()
        ax.set_xlabel("paired difference, this run - compared run (points, 95% CI)")

    return svg_figure(draw, figsize=(6.5, 0.45 * len(names) + 1.0), name=name)


def _pooled(group: dict[str, Any], tool: str) -> str:
    pooled = group.get("pooled_shares", {})
    values = [pooled.get(subset, {}).get(tool) for subset in ("all", "successful")]
    return " / ".join("n/a" if v is None else f"{v:.1f}" for v in values)


def _table(rows: list[tuple[str, ...]], headers: tuple[str, ...]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _group_html(key: str, group: dict[str, Any], data: dict[str, Any]) -> str:
    definitions = data["definitions"]
    titles = {n: d["title"] for n, d in definitions.items()}
    slug = "".join(c if c.isalnum() else "-" for c in key)
    caps = group["capabilities"]
    shares = group["tool_shares"]
    parts = [
        f"<h3>{html.escape(key)}</h3>",
        f"<p>{group['n_rollouts']} rollouts ({group['n_successful']} successful), {group['n_tasks']} tasks × "
        f"{group['n_seeds']} seeds, {group['n_calls']} tool calls.</p>",
        "<h4>Capabilities</h4>",
        _capability_chart(caps, titles, f"behavior-caps-{slug}"),
        _table(
            [(titles[n], _fmt(caps[n]), definitions[n]["definition"]) for n in caps],
            ("metric", "value [95% CI]", "definition"),
        ),
    ]
    if shares.get("all"):
        shell = shares["all"].get("generic_shell")
        shell_ok = shares.get("successful", {}).get("generic_shell")
        parts += [
            "<h4>Tool-usage shares</h4>",
            f"<p><strong>Generic shell: {html.escape(_fmt(shell))}% of calls over all rollouts, "
            f"{html.escape(_fmt(shell_ok))}% over successful rollouts.</strong> "
            f"{html.escape(definitions['tool_shares']['definition'])}</p>",
            _share_chart(shares, f"behavior-shares-{slug}"),
            _table(
                [
                    (t, _fmt(i), _fmt(shares.get("successful", {}).get(t)), _pooled(group, t))
                    for t, i in shares["all"].items()
                ],
                (
                    "tool",
                    "all rollouts % [95% CI]",
                    "successful rollouts % [95% CI]",
                    "pooled %: all / successful",
                ),
            ),
        ]
    comparison = (data.get("comparison") or {}).get("groups", {}).get(key)
    if comparison:
        diffs = comparison["capabilities"]
        shell_diffs = {
            f"generic shell ({subset})": comparison["tool_shares"].get(subset, {}).get("generic_shell")
            for subset in ("all", "successful")
        }
        rows = [(titles[n], _fmt(d), _fmt_pair(d)) for n, d in diffs.items()]
        rows += [(n, _fmt(d), _fmt_pair(d)) for n, d in shell_diffs.items()]
        parts += [
            f"<h4>Compared with {html.escape(str(data['comparison'].get('compared_run', '')))}</h4>",
            "<p>Paired differences on the same tasks and seeds (this run minus the compared run), with "
            "BCa bootstrap CIs that resample tasks, each keeping its paired task × seed cells.</p>",
            _difference_chart({**diffs, **shell_diffs}, titles, f"behavior-diff-{slug}"),
            _table(rows, ("metric", "difference [95% CI]", "this run vs compared run")),
        ]
    return "\n".join(parts)


def _fmt_pair(diff: dict[str, Any] | None) -> str:
    if not diff:
        return "not enough paired tasks"
    return f"{diff['this_run']:.1f} vs {diff['compared_run']:.1f} ({diff['n_cells']} paired cells)"


def behavior_section(run_dir: Path) -> Section | None:
    """The Behavior section of `run_dir`'s report, or None when `forge-eval analyze` has not run."""
    data = RunDir(run_dir).read_json(RunDir.BEHAVIOR)
    if data is None:
        return None
    groups = data["groups"]
    # one harness: its group repeats "overall", so show overall only
    keys = ["overall"] if len(groups) <= 2 else list(groups)
    body = [
        f"<p>Estimator: {html.escape(data['estimator'])}. Read from <code>{BEHAVIOR_FILE}</code>.</p>",
        *(_group_html(k, groups[k], data) for k in keys),
    ]
    return Section("Behavior", "\n".join(body), anchor="behavior")


REPORT_SECTIONS.register("behavior", behavior_section)
