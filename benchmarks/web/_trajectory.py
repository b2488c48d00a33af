"""What an episode leaves for scorers and judges: each action with the screenshot and page after it."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

#: Characters of compacted ARIA a text-only model is shown (every prompt token costs ~25 ms on a CPU core).
ARIA_CHARS = 1000


@dataclass
class Observation:
    """What the agent sees after a step.

    Attributes:
        url, title: Of the active tab.
        tabs: One dict per open tab (index, url, title, active).
        screenshot: PNG of the viewport, taken after the page settled.
        aria: Playwright's ARIA snapshot of the page (YAML-like text), if requested.
        elements: Visible interactive elements with ids and centre coordinates, if requested.
    """

    url: str
    title: str
    tabs: list[dict[str, Any]]
    screenshot: bytes
    aria: str | None = None
    elements: list[dict[str, Any]] | None = None

    def screenshot_data_uri(self) -> str:
        return "data:image/png;base64," + base64.b64encode(self.screenshot).decode()

    def elements_text(self, viewport: tuple[int, int] | None = None) -> str:
        """The element list as lines `[id] role "name" at x, y` for text-only agents.

        Args:
            viewport: (width, height): coordinates as percentages of it (MolmoWeb's convention);
                None: viewport pixels (what the browser tools take).
        """
        def at(e: dict[str, Any]) -> str:
            if viewport is None:
                return f"x={e['x']}, y={e['y']}"
            return f"x={e['x'] * 100 / viewport[0]:.1f}, y={e['y'] * 100 / viewport[1]:.1f}"

        return "\n".join(f'[{e["id"]}] {e["role"]} "{e["name"]}" at {at(e)}' for e in self.elements or [])

    def page_text(self, viewport: tuple[int, int] | None = None, aria_chars: int = ARIA_CHARS) -> str:
        """The page for a model that cannot see the screenshot: interactive elements + compact ARIA."""
        aria = compact_aria(self.aria or "")
        if len(aria) > aria_chars:
            aria = aria[:aria_chars] + "\n(page text cut)"
        return f"Interactive elements:\n{self.elements_text(viewport)}\nPage text:\n{aria}"


def compact_aria(aria: str) -> str:
    """Playwright's ARIA snapshot without what a text-only model pays for and cannot use.

    `/url:` lines (a third of a link-heavy page's characters; the agent clicks, it does not read hrefs)
    are dropped, and with them the colon that only announced them.
    """
    lines: list[str] = []
    for line in aria.splitlines():
        stripped = line.lstrip()
        if stripped.startswith("- /url:"):
            parent = lines[-1] if lines else ""
            # The colon goes only when the URL was the parent's one child (its line is the one above).
            if parent.endswith(":") and len(parent) - len(parent.lstrip()) < len(line) - len(stripped):
                lines[-1] = parent[:-1]
            continue
        lines.append(line)
    return "\n".join(lines)


@dataclass
class Step:
    """One action and the page it led to (`error` when the action failed)."""

    action: dict[str, Any]
    url: str
    title: str
    screenshot: bytes
    aria: str | None = None
    thought: str | None = None
    error: str | None = None


@dataclass
class Trajectory:
    """An episode: the task, the start page, every step, and how it ended."""

    task: str
    start_url: str
    steps: list[Step] = field(default_factory=list)
    initial: Step | None = None
    answer: str | None = None
    infeasible: str | None = None

    @property
    def screenshots(self) -> list[bytes]:
        """Every screenshot in order: the start page, then one after each step."""
        first = [self.initial.screenshot] if self.initial else []
        return first + [s.screenshot for s in self.steps]

    @property
    def final_response(self) -> str:
        """What the judges read as the answer: the message to the user, else the last thought."""
        if self.answer is not None:
            return self.answer
        if self.infeasible is not None:
            return f"[INFEASIBLE] {self.infeasible}"
        thoughts = [s.thought for s in self.steps if s.thought]
        return thoughts[-1] if thoughts else ""

    def action_history(self) -> list[str]:
        """One line per step: the action as JSON-ish text (the judges' "action history")."""
        lines = []
        for s in self.steps:
            args = ", ".join(f"{k}={v!r}" for k, v in s.action.items() if k != "name")
            lines.append(f"{s.action.get('name')}({args})" + (f" -> error: {s.error}" if s.error else ""))
        return lines
