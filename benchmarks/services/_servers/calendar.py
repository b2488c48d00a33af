"""Calendar: events with date, start/end times and attendees; list, get, create, update, delete."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field, field_validator, model_validator

from forge_eval.benchmarks.services._app import Call, Service, ServiceHTTPError, endpoint, parse_model
from forge_eval.benchmarks.services._records import get_endpoint, next_id, record, require_nonempty, search

Date = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="YYYY-MM-DD")]
Time = Annotated[str, Field(pattern=r"^\d{2}:\d{2}$", description="HH:MM, 24-hour")]


def _pad_time(value: Any) -> Any:
    # "9:30" -> "09:30": small models drop the leading zero.
    if isinstance(value, str) and len(value.strip()) == 4 and value.strip()[1] == ":":
        return "0" + value.strip()
    return value


class Event(BaseModel):
    id: str
    title: str
    date: Date
    start: Time
    end: Time
    attendees: list[str] = []
    location: str = ""
    description: str = ""

    @field_validator("start", "end", mode="before")
    @classmethod
    def pad(cls, value: Any) -> Any:
        return _pad_time(value)

    @model_validator(mode="after")
    def ordered(self) -> Event:
        if self.end <= self.start:
            raise ValueError(f"end {self.end} must be after start {self.start}")
        return self


class CalendarState(BaseModel):
    events: list[Event] = []


class EventChanges(BaseModel):
    title: str | None = None
    date: Date | None = None
    start: Time | None = None
    end: Time | None = None
    attendees: list[str] | None = None
    location: str | None = None
    description: str | None = None

    @field_validator("start", "end", mode="before")
    @classmethod
    def pad(cls, value: Any) -> Any:
        return _pad_time(value)

    @field_validator("attendees", mode="before")
    @classmethod
    def split(cls, value: Any) -> Any:
        return [a.strip() for a in value.split(",") if a.strip()] if isinstance(value, str) else value


def _overlaps(a: Event, b: Event) -> bool:
    return a.id != b.id and a.date == b.date and a.start < b.end and b.start < a.end


class CalendarService(Service):
    name = "calendar"
    state_model = CalendarState

    @endpoint("GET", "/events")
    async def list(self, call: Call) -> list[Event]:
        events: list[Event] = call.state.events
        if date := call.query.get("date"):
            events = [e for e in events if e.date == date.strip()]
        if attendee := call.query.get("attendee", "").strip().lower():
            events = [e for e in events if any(attendee in a.lower() for a in e.attendees)]
        events = search(events, call.query.get("query", ""), lambda e: f"{e.title} {e.description}")
        return sorted(events, key=lambda e: (e.date, e.start))

    get = get_endpoint("/events/{id}", "events", "event")

    @endpoint("POST", "/events")
    async def create(self, call: Call) -> dict[str, Any]:
        state: CalendarState = call.state
        changes = call.parse(EventChanges)
        missing = [f for f in ("title", "date", "start", "end") if getattr(changes, f) is None]
        if missing:
            raise ServiceHTTPError(422, f"invalid request: missing {', '.join(missing)}")
        fields = changes.model_dump(exclude_none=True)
        require_nonempty(fields["title"], "title")
        event = _validated({"id": next_id("ev-", [e.id for e in state.events]), **fields})
        state.events.append(event)
        return {"event": event, "conflicts": [e.id for e in state.events if _overlaps(event, e)]}

    @endpoint("PATCH", "/events/{id}")
    async def update(self, call: Call) -> dict[str, Any]:
        state: CalendarState = call.state
        event = record(call, "events", "event")
        changes = call.parse(EventChanges).model_dump(exclude_none=True)
        updated = _validated({**event.model_dump(), **changes})
        state.events[state.events.index(event)] = updated
        return {"event": updated, "conflicts": [e.id for e in state.events if _overlaps(updated, e)]}

    @endpoint("DELETE", "/events/{id}")
    async def delete(self, call: Call) -> dict[str, Any]:
        state: CalendarState = call.state
        event = record(call, "events", "event")
        state.events.remove(event)
        return {"id": event.id, "deleted": True}


def _validated(fields: dict[str, Any]) -> Event:
    return parse_model(Event, fields)
