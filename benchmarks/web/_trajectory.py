"""What an episode leaves for scorers and judges: each action with the screenshot and page after it."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any


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

    def elements_text(self) -> str:
        """The element list as lines `[id] role "name" at (x, y)` for text-only agents."""
        return "\n".join(
            f'[{e["id"]}] {e["role"]} "{e["name"]}" at ({e["x"]}, {e["y"]})' for e in self.elements or []
        )


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
