"""How numbers look in the report: one place, so the headline, tables and tests agree."""

from __future__ import annotations

import html


def percent(value: float | None) -> str:
    """A fraction in [0, 1] as a percentage with one decimal ("62.5%"); None as "n/a"."""
    return "n/a" if value is None else f"{100 * value:.1f}%"


def interval(low: float | None, high: float | None) -> str:
    """A confidence interval as "[41.7%, 80.0%]"."""
    if low is None or high is None:
        return "n/a"
    return f"[{percent(low)}, {percent(high)}]"


def esc(value: object) -> str:
    """Escape any value for HTML text or a quoted attribute."""
    return html.escape(str(value), quote=True)
