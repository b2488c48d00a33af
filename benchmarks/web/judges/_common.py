"""What both judges share: the judge model role, screenshots as images or as text, judge errors."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import ContentImage, ContentText, Model

from forge_eval._errors import ForgeError
from forge_eval.benchmarks.web._trajectory import Step, Trajectory
from forge_eval.benchmarks.web.judges._ocr import ocr, ocr_available
from forge_eval.harnesses import is_text_only

#: Inspect model role the judges use (`forge-eval run --judge MODEL` binds it; unbound = the run's model).
JUDGE_ROLE = "judge"
#: ARIA characters per screenshot in the text-only variant.
TEXT_ARIA_CHARS = 1500


@dataclass(frozen=True)
class JudgeView:
    """How the judge sees screenshots: as images (the protocol) or as ARIA + OCR text (not comparable)."""

    text: bool
    ocr: bool = True

    def screenshot(self, step: Step, label: str) -> list[Any]:
        """One screenshot as message content."""
        if not self.text:
            uri = "data:image/png;base64," + base64.b64encode(step.screenshot).decode()
            return [ContentText(text=label), ContentImage(image=uri)]
        parts = [
            f"{label} (text rendering; the judge cannot see images)",
            f"URL: {step.url}",
            f"Title: {step.title}",
        ]
        if step.aria:
            parts.append("Accessibility tree:\n" + step.aria[:TEXT_ARIA_CHARS])
        if self.ocr and ocr_available():
            parts.append("OCR of the screenshot:\n" + ocr(step.screenshot))
        return [ContentText(text="\n".join(parts))]

    @property
    def comparable(self) -> bool:
        return not self.text


class JudgeError(ForgeError):
    """The judge gave no verdict (an empty reply): the sample ends with this error, not a score of 0."""


def resolve_view(variant_text: bool, model: Model, ocr_text: bool) -> JudgeView:
    """The text variant when asked for, or when the judge model cannot take images."""
    return JudgeView(text=variant_text or is_text_only(str(model)), ocr=ocr_text)


def all_steps(trajectory: Trajectory) -> list[Step]:
    """The start page and every step, in order (each carries the screenshot taken after it)."""
    return ([trajectory.initial] if trajectory.initial else []) + list(trajectory.steps)


def judge_metadata(name: str, model: Model, view: JudgeView, images: int, **extra: Any) -> dict[str, Any]:
    return {
        "judge": name,
        "judge_model": str(model),
        "images": images if not view.text else 0,
        "screenshots": images,
        "variant": "text" if view.text else "vision",
        "comparable": view.comparable,
        **extra,
    }
