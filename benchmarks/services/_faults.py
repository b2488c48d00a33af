"""Fault injection: make chosen endpoints fail a set number of times, so recovery is observable."""

from __future__ import annotations

from pydantic import BaseModel, Field


class Fault(BaseModel):
    """The next `times` calls to `endpoint` fail with `status` before touching any state.

    Args:
        endpoint: Endpoint name within the service (e.g. "send" for mail).
        status: HTTP status of the injected failure (503 unavailable, 429 rate limited, ...).
        times: How many consecutive calls fail, starting with the first.
        message: Error text returned to the caller.
    """

    endpoint: str
    status: int = Field(default=503, ge=400, le=599)
    times: int = Field(default=1, ge=1)
    message: str = "service temporarily unavailable, please retry"


class FaultPlan:
    """The faults still pending in one world (consumed as calls arrive)."""

    def __init__(self, faults: list[Fault]) -> None:
        self._faults = list(faults)
        self._remaining = [f.times for f in faults]

    def take(self, endpoint: str) -> Fault | None:
        """The fault this call to `endpoint` must return, consuming one occurrence; None = no fault."""
        for i, fault in enumerate(self._faults):
            if fault.endpoint == endpoint and self._remaining[i] > 0:
                self._remaining[i] -= 1
                return fault
        return None

    def describe(self) -> list[dict[str, object]]:
        return [
            {**f.model_dump(), "fired": f.times - left, "remaining": left}
            for f, left in zip(self._faults, self._remaining, strict=True)
        ]
