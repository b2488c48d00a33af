"""Contacts: an address book to search, read, add to and edit."""

from __future__ import annotations

from pydantic import BaseModel

from forge_eval.benchmarks.services._app import Call, Endpoint, Service
from forge_eval.benchmarks.services._records import find, next_id, require_nonempty, search


class Contact(BaseModel):
    id: str
    name: str
    email: str = ""
    phone: str = ""
    company: str = ""
    title: str = ""


class ContactsState(BaseModel):
    contacts: list[Contact] = []


class ContactFields(BaseModel):
    name: str | None = None
    email: str | None = None
    phone: str | None = None
    company: str | None = None
    title: str | None = None


class ContactsService(Service):
    name = "contacts"
    description = "the user's address book"
    state_model = ContactsState

    def endpoints(self) -> list[Endpoint]:
        return [
            Endpoint("search", "GET", "/contacts", self.search),
            Endpoint("get", "GET", "/contacts/{id}", self.get),
            Endpoint("create", "POST", "/contacts", self.create),
            Endpoint("update", "PATCH", "/contacts/{id}", self.update),
        ]

    async def search(self, call: Call) -> list[Contact]:
        return search(
            call.state.contacts,
            call.query.get("query", ""),
            lambda c: f"{c.name} {c.email} {c.company} {c.title}",
        )

    async def get(self, call: Call) -> Contact:
        return find(call.state.contacts, call.path["id"], "contact", lambda c: c.id)

    async def create(self, call: Call) -> Contact:
        state: ContactsState = call.state
        fields = call.parse(ContactFields).model_dump(exclude_none=True)
        require_nonempty(fields.get("name", ""), "name")
        contact = Contact(id=next_id("c", [c.id for c in state.contacts]), **fields)
        state.contacts.append(contact)
        return contact

    async def update(self, call: Call) -> Contact:
        contact = find(call.state.contacts, call.path["id"], "contact", lambda c: c.id)
        for key, value in call.parse(ContactFields).model_dump(exclude_none=True).items():
            setattr(contact, key, value)
        return contact
