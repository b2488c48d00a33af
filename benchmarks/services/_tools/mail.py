"""Mail tools."""

from inspect_ai.tool import Tool

from forge_eval.benchmarks.services._client import call_service
from forge_eval.benchmarks.services._toolspec import dumps, service_tool


@service_tool("mail", "read")
def mail_search() -> Tool:
    async def execute(query: str = "", folder: str = "inbox") -> str:
        """Search the mailbox. Returns id, sender, subject and date of matching messages (no bodies).

        Args:
            query: Words to find in sender, subject or body; empty lists every message.
            folder: inbox, sent, trash or all.
        """
        params = {"query": query, "folder": folder}
        return dumps(await call_service("mail", "GET", "/messages", params=params))

    return execute


@service_tool("mail", "read", resource_args=("message_id",))
def mail_read() -> Tool:
    async def execute(message_id: str) -> str:
        """Read one message in full, including its body.

        Args:
            message_id: Message id, as listed by mail_search.
        """
        return dumps(await call_service("mail", "GET", f"/messages/{message_id}"))

    return execute


@service_tool("mail", "write", result_id="id")
def mail_send() -> Tool:
    async def execute(to: list[str], subject: str, body: str) -> str:
        """Send an email.

        Args:
            to: Recipient email addresses.
            subject: Subject line.
            body: Message text.
        """
        return dumps(
            await call_service("mail", "POST", "/messages", json={"to": to, "subject": subject, "body": body})
        )

    return execute


@service_tool("mail", "write", resource_args=("message_id",))
def mail_delete() -> Tool:
    async def execute(message_id: str) -> str:
        """Move a message to the trash.

        Args:
            message_id: Message id, as listed by mail_search.
        """
        return dumps(await call_service("mail", "DELETE", f"/messages/{message_id}"))

    return execute
