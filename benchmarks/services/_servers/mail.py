"""Mail: a mailbox with inbox/sent/trash folders; search, read, send, delete."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator

from forge_eval.benchmarks.services._app import Call, Service, endpoint
from forge_eval.benchmarks.services._records import next_id, record, require_nonempty, search

Folder = Literal["inbox", "sent", "trash"]


def _as_list(value: str | list[str]) -> list[str]:
    items = value.split(",") if isinstance(value, str) else value
    return [i.strip() for i in items if i.strip()]


class Message(BaseModel):
    id: str
    folder: Folder = "inbox"
    sender: str
    to: list[str] = []
    cc: list[str] = []
    subject: str = ""
    body: str = ""
    date: str = ""
    unread: bool = True

    def summary(self) -> dict[str, object]:
        return {"id": self.id, "from": self.sender, "to": self.to, "subject": self.subject,
                "date": self.date, "unread": self.unread, "folder": self.folder}


class MailState(BaseModel):
    owner: str = "me@example.com"
    messages: list[Message] = []


class SendRequest(BaseModel):
    to: list[str] = Field(min_length=1)
    subject: str
    body: str = ""
    cc: list[str] = []

    @field_validator("to", "cc", mode="before")
    @classmethod
    def split_addresses(cls, value: str | list[str]) -> list[str]:
        return _as_list(value)


class MailService(Service):
    name = "mail"
    state_model = MailState

    @endpoint("GET", "/messages")
    async def search(self, call: Call) -> list[dict[str, object]]:
        state: MailState = call.state
        folder = call.query.get("folder", "inbox").lower()
        pool = [m for m in state.messages if folder == "all" or m.folder == folder]
        hits = search(pool, call.query.get("query", ""), lambda m: f"{m.sender} {m.subject} {m.body}")
        return [m.summary() for m in hits]

    @endpoint("GET", "/messages/{id}")
    async def read(self, call: Call) -> Message:
        message = record(call, "messages", "message")
        message.unread = False
        return message

    @endpoint("POST", "/messages")
    async def send(self, call: Call) -> dict[str, object]:
        state: MailState = call.state
        request = call.parse(SendRequest)
        require_nonempty(request.subject, "subject")
        message = Message(
            id=next_id("m", [m.id for m in state.messages]),
            folder="sent",
            sender=state.owner,
            to=request.to,
            cc=request.cc,
            subject=request.subject,
            body=request.body,
            unread=False,
        )
        state.messages.append(message)
        return {"id": message.id, "status": "sent", "to": message.to}

    @endpoint("DELETE", "/messages/{id}")
    async def delete(self, call: Call) -> dict[str, object]:
        message = record(call, "messages", "message")
        message.folder = "trash"
        return {"id": message.id, "folder": "trash"}
