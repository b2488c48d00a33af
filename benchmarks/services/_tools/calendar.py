"""Calendar tools."""

from inspect_ai.tool import Tool

from forge_eval.benchmarks.services._client import call_service
from forge_eval.benchmarks.services._toolspec import dumps, service_tool


@service_tool("calendar", "read")
def calendar_list_events() -> Tool:
    async def execute(date: str = "", query: str = "") -> str:
        """List calendar events, sorted by date and time.

        Args:
            date: Only events on this day (YYYY-MM-DD); empty = all days.
            query: Words to find in event titles; empty = all events.
        """
        return dumps(await call_service("calendar", "GET", "/events", params={"date": date, "query": query}))

    return execute


@service_tool("calendar", "read", resource_args=("event_id",))
def calendar_get_event() -> Tool:
    async def execute(event_id: str) -> str:
        """Get one event by id.

        Args:
            event_id: Event id, as listed by calendar_list_events.
        """
        return dumps(await call_service("calendar", "GET", f"/events/{event_id}"))

    return execute


@service_tool("calendar", "write", result_id="event.id")
def calendar_create_event() -> Tool:
    async def execute(
        title: str, date: str, start: str, end: str, attendees: list[str] = [], location: str = ""  # noqa: B006
    ) -> str:
        """Create a calendar event. The result lists overlapping events as conflicts.

        Args:
            title: Event title.
            date: Day, YYYY-MM-DD.
            start: Start time, HH:MM (24-hour).
            end: End time, HH:MM (24-hour).
            attendees: Attendee email addresses.
            location: Room or place.
        """
        event = {"title": title, "date": date, "start": start, "end": end,
                 "attendees": list(attendees), "location": location}
        return dumps(await call_service("calendar", "POST", "/events", json=event))

    return execute


@service_tool("calendar", "write", resource_args=("event_id",))
def calendar_update_event() -> Tool:
    async def execute(
        event_id: str, title: str = "", date: str = "", start: str = "", end: str = "",
        attendees: list[str] = [],  # noqa: B006
    ) -> str:
        """Change an event; empty fields stay as they are.

        Args:
            event_id: Event id, as listed by calendar_list_events.
            title: New title.
            date: New day, YYYY-MM-DD.
            start: New start time, HH:MM.
            end: New end time, HH:MM.
            attendees: New full list of attendee emails.
        """
        changes = {"title": title, "date": date, "start": start, "end": end, "attendees": attendees}
        body = {k: v for k, v in changes.items() if v}
        return dumps(await call_service("calendar", "PATCH", f"/events/{event_id}", json=body))

    return execute


@service_tool("calendar", "write", resource_args=("event_id",))
def calendar_delete_event() -> Tool:
    async def execute(event_id: str) -> str:
        """Delete an event.

        Args:
            event_id: Event id, as listed by calendar_list_events.
        """
        return dumps(await call_service("calendar", "DELETE", f"/events/{event_id}"))

    return execute
