"""Contacts tools."""

from inspect_ai.tool import Tool

from forge_eval.benchmarks.services._client import call_service
from forge_eval.benchmarks.services._toolspec import dumps, service_tool


@service_tool("contacts", "read")
def contacts_search() -> Tool:
    async def execute(query: str) -> str:
        """Find contacts by name, email, company or job title.

        Args:
            query: Words to search for, e.g. a name.
        """
        return dumps(await call_service("contacts", "GET", "/contacts", params={"query": query}))

    return execute


@service_tool("contacts", "read", resource_args=("contact_id",))
def contacts_get() -> Tool:
    async def execute(contact_id: str) -> str:
        """Get one contact by id.

        Args:
            contact_id: Contact id, as listed by contacts_search.
        """
        return dumps(await call_service("contacts", "GET", f"/contacts/{contact_id}"))

    return execute


@service_tool("contacts", "write", result_id="id")
def contacts_create() -> Tool:
    async def execute(name: str, email: str = "", phone: str = "", company: str = "", title: str = "") -> str:
        """Add a contact.

        Args:
            name: Full name.
            email: Email address.
            phone: Phone number.
            company: Company.
            title: Job title.
        """
        contact = {"name": name, "email": email, "phone": phone, "company": company, "title": title}
        return dumps(await call_service("contacts", "POST", "/contacts", json=contact))

    return execute


@service_tool("contacts", "write", resource_args=("contact_id",))
def contacts_update() -> Tool:
    async def execute(
        contact_id: str, email: str = "", phone: str = "", company: str = "", title: str = ""
    ) -> str:
        """Change a contact; empty fields stay as they are.

        Args:
            contact_id: Contact id, as listed by contacts_search.
            email: New email.
            phone: New phone number.
            company: New company.
            title: New job title.
        """
        changes = {"email": email, "phone": phone, "company": company, "title": title}
        body = {k: v for k, v in changes.items() if v}
        return dumps(await call_service("contacts", "PATCH", f"/contacts/{contact_id}", json=body))

    return execute
