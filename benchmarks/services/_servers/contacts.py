"""Contacts: an address book to search, read, add to and edit."""

from __future__ import annotations

from pydantic import BaseModel

from forge_eval.benchmarks.services._app import Call, Service, endpoint
from forge_eval.benchmarks.services._records import (
    get_endpoint,
    next_id,
    require_nonempty,
    search,
    update_endpoint,
)


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
    state_model = ContactsState

    @endpoint("GET", "/contacts")
    async def search(self, call: Call) -> list[Contact]:
        return search(
            call.state.contacts,
            call.query.get("query", ""),
            lambda c: f"{c.name} {c.email} {c.company} {c.title}",
        )

    get = get_endpoint("/contacts/{id}", "contacts", "contact")

    @endpoint("POST", "/contacts")
    async def create(self, call: Call) -> Contact:
        state: ContactsState = call.state
        fields = call.parse(ContactFields).model_dump(exclude_none=True)
        require_nonempty(fields.get("name", ""), "name")
        contact = Contact(id=next_id("c", [c.id for c in state.contacts]), **fields)
        state.contacts.append(contact)
        return contact

    update = update_endpoint("/contacts/{id}", "contacts", "contact", ContactFields)
