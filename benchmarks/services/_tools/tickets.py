"""Helpdesk ticket tools."""

from inspect_ai.tool import Tool

from forge_eval.benchmarks.services._client import call_service
from forge_eval.benchmarks.services._toolspec import dumps, service_tool


@service_tool("tickets", "read")
def tickets_list() -> Tool:
    async def execute(status: str = "", query: str = "") -> str:
        """List helpdesk tickets (id, title, status, priority, assignee).

        Args:
            status: Only tickets with this status (open, pending, closed); empty = any.
            query: Words to find in title or description; empty = all.
        """
        params = {"status": status, "query": query}
        return dumps(await call_service("tickets", "GET", "/tickets", params=params))

    return execute


@service_tool("tickets", "read", resource_args=("ticket_id",))
def tickets_get() -> Tool:
    async def execute(ticket_id: str) -> str:
        """Get one ticket in full, with description and comments.

        Args:
            ticket_id: Ticket id, e.g. "T-101".
        """
        return dumps(await call_service("tickets", "GET", f"/tickets/{ticket_id}"))

    return execute


@service_tool("tickets", "write", result_id="id")
def tickets_create() -> Tool:
    async def execute(title: str, description: str = "", priority: str = "medium") -> str:
        """Open a new ticket.

        Args:
            title: Short summary.
            description: Details.
            priority: low, medium, high or urgent.
        """
        ticket = {"title": title, "description": description, "priority": priority}
        return dumps(await call_service("tickets", "POST", "/tickets", json=ticket))

    return execute


@service_tool("tickets", "write", resource_args=("ticket_id",))
def tickets_update() -> Tool:
    async def execute(
        ticket_id: str, status: str = "", priority: str = "", assignee: str = "", resolution: str = ""
    ) -> str:
        """Change a ticket; empty fields stay as they are.

        Args:
            ticket_id: Ticket id, e.g. "T-101".
            status: open, pending or closed.
            priority: low, medium, high or urgent.
            assignee: Email of the person to assign.
            resolution: How it was resolved (when closing).
        """
        changes = {"status": status, "priority": priority, "assignee": assignee, "resolution": resolution}
        body = {k: v for k, v in changes.items() if v}
        return dumps(await call_service("tickets", "PATCH", f"/tickets/{ticket_id}", json=body))

    return execute


@service_tool("tickets", "write", resource_args=("ticket_id",))
def tickets_comment() -> Tool:
    async def execute(ticket_id: str, body: str) -> str:
        """Add a comment to a ticket.

        Args:
            ticket_id: Ticket id, e.g. "T-101".
            body: Comment text.
        """
        path = f"/tickets/{ticket_id}/comments"
        return dumps(await call_service("tickets", "POST", path, json={"body": body}))

    return execute
