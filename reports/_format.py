"""How numbers look in the report: one place, so the headline, tables and tests agree."""

from __future__ import annotations

import html
from collections.abc import Callable


def percent(value: float | None) -> str:
    """A fraction in [0, 1] as a percentage with one decimal ("62.5%"); None as "n/a"."""
    return "n/a" if value is None else f"{100 * value:.1f}%"


def points(value: float | None) -> str:
    """A difference of two fractions in percentage points, signed ("+12.5 pp"); None as "n/a"."""
    return "n/a" if value is None else f"{100 * value:+.1f} pp"


def interval(
    low: float | None, high: float | None, unit: Callable[[float | None], str] = percent, missing: str = "n/a"
) -> str:
    """A confidence interval as "[41.7%, 80.0%]" (bounds written by `unit`); `missing` without one."""
    if low is None or high is None:
        return missing
    return f"[{unit(low)}, {unit(high)}]"


def esc(value: object) -> str:
    """Escape any value for HTML text or a quoted attribute."""
    return html.escape(str(value), quote=True)
