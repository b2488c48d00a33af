"""Knowledge base: articles to search, read and edit."""

from __future__ import annotations

from pydantic import BaseModel

from forge_eval.benchmarks.services._app import Call, Service, endpoint
from forge_eval.benchmarks.services._records import get_endpoint, search, update_endpoint

SNIPPET_CHARS = 120


class Article(BaseModel):
    id: str
    title: str
    body: str = ""
    tags: list[str] = []


class KbState(BaseModel):
    articles: list[Article] = []


class ArticleChanges(BaseModel):
    title: str | None = None
    body: str | None = None


class KbService(Service):
    name = "kb"
    state_model = KbState

    @endpoint("GET", "/articles")
    async def search(self, call: Call) -> list[dict[str, str]]:
        articles: list[Article] = call.state.articles
        hits = search(articles, call.query.get("query", ""), lambda a: f"{a.title} {a.tags} {a.body}")
        return [{"id": a.id, "title": a.title, "snippet": a.body[:SNIPPET_CHARS]} for a in hits]

    get = get_endpoint("/articles/{id}", "articles", "article")
    update = update_endpoint("/articles/{id}", "articles", "article", ArticleChanges)
