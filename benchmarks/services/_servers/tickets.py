"""Helpdesk tickets: list, get, create, update (status/priority/assignee/tags), comment."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, Field

from forge_eval.benchmarks.services._app import Call, Service, endpoint
from forge_eval.benchmarks.services._records import (
    get_endpoint,
    lowercase,
    next_id,
    record,
    require_nonempty,
    search,
    update_endpoint,
)

Status = Annotated[Literal["open", "pending", "closed"], BeforeValidator(lowercase)]
Priority = Annotated[Literal["low", "medium", "high", "urgent"], BeforeValidator(lowercase)]


class Comment(BaseModel):
    author: str = "assistant"
    body: str


class Ticket(BaseModel):
    id: str
    title: str
    description: str = ""
    requester: str = ""
    status: Status = "open"
    priority: Priority = "medium"
    assignee: str | None = None
    tags: list[str] = []
    resolution: str = ""
    comments: list[Comment] = []

    def summary(self) -> dict[str, object]:
        return {"id": self.id, "title": self.title, "status": self.status,
                "priority": self.priority, "assignee": self.assignee}


class TicketsState(BaseModel):
    tickets: list[Ticket] = []


class NewTicket(BaseModel):
    title: str
    description: str = ""
    requester: str = ""
    priority: Priority = "medium"
    assignee: str | None = None
    tags: list[str] = []


class TicketChanges(BaseModel):
    status: Status | None = None
    priority: Priority | None = None
    assignee: str | None = None
    tags: list[str] | None = None
    resolution: str | None = None


class NewComment(BaseModel):
    body: str = Field(min_length=1)


class TicketsService(Service):
    name = "tickets"
    state_model = TicketsState

    @endpoint("GET", "/tickets")
    async def list(self, call: Call) -> list[dict[str, object]]:
        tickets: list[Ticket] = call.state.tickets
        for key in ("status", "priority"):
            if value := call.query.get(key, "").strip().lower():
                tickets = [t for t in tickets if getattr(t, key) == value]
        hits = search(tickets, call.query.get("query", ""), lambda t: f"{t.title} {t.description}")
        return [t.summary() for t in hits]

    get = get_endpoint("/tickets/{id}", "tickets", "ticket")

    @endpoint("POST", "/tickets")
    async def create(self, call: Call) -> dict[str, object]:
        state: TicketsState = call.state
        request = call.parse(NewTicket)
        require_nonempty(request.title, "title")
        ticket = Ticket(id=next_id("T-", [t.id for t in state.tickets], start=101), **request.model_dump())
        state.tickets.append(ticket)
        return {"id": ticket.id, "status": ticket.status, "priority": ticket.priority}

    update = update_endpoint("/tickets/{id}", "tickets", "ticket", TicketChanges)

    @endpoint("POST", "/tickets/{id}/comments")
    async def comment(self, call: Call) -> dict[str, object]:
        ticket = record(call, "tickets", "ticket")
        ticket.comments.append(Comment(body=call.parse(NewComment).body))
        return {"id": ticket.id, "comments": len(ticket.comments)}
