"""Knowledge-base tools."""

from inspect_ai.tool import Tool

from forge_eval.benchmarks.services._client import call_service
from forge_eval.benchmarks.services._toolspec import dumps, service_tool


@service_tool("kb", "read")
def kb_search() -> Tool:
    async def execute(query: str) -> str:
        """Search knowledge-base articles. Returns id, title and the start of the text.

        Args:
            query: Words to search for.
        """
        return dumps(await call_service("kb", "GET", "/articles", params={"query": query}))

    return execute


@service_tool("kb", "read", resource_args=("article_id",))
def kb_get() -> Tool:
    async def execute(article_id: str) -> str:
        """Read a full article.

        Args:
            article_id: Article id, as listed by kb_search.
        """
        return dumps(await call_service("kb", "GET", f"/articles/{article_id}"))

    return execute


@service_tool("kb", "write", resource_args=("article_id",))
def kb_update() -> Tool:
    async def execute(article_id: str, body: str = "", title: str = "") -> str:
        """Replace an article's text and/or title; empty fields stay as they are.

        Args:
            article_id: Article id, as listed by kb_search.
            body: New full text.
            title: New title.
        """
        changes = {k: v for k, v in {"body": body, "title": title}.items() if v}
        return dumps(await call_service("kb", "PATCH", f"/articles/{article_id}", json=changes))

    return execute
