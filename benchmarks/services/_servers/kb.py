"""Knowledge base: articles to search, read and edit."""

from __future__ import annotations

from pydantic import BaseModel

from forge_eval.benchmarks.services._app import Call, Endpoint, Service
from forge_eval.benchmarks.services._records import find, search

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
    description = "the company knowledge base"
    state_model = KbState

    def endpoints(self) -> list[Endpoint]:
        return [
            Endpoint("search", "GET", "/articles", self.search),
            Endpoint("get", "GET", "/articles/{id}", self.get),
            Endpoint("update", "PATCH", "/articles/{id}", self.update),
        ]

    async def search(self, call: Call) -> list[dict[str, str]]:
        articles: list[Article] = call.state.articles
        hits = search(articles, call.query.get("query", ""), lambda a: f"{a.title} {a.tags} {a.body}")
        return [{"id": a.id, "title": a.title, "snippet": a.body[:SNIPPET_CHARS]} for a in hits]

    async def get(self, call: Call) -> Article:
        return find(call.state.articles, call.path["id"], "article", lambda a: a.id)

    async def update(self, call: Call) -> Article:
        article = find(call.state.articles, call.path["id"], "article", lambda a: a.id)
        for key, value in call.parse(ArticleChanges).model_dump(exclude_none=True).items():
            setattr(article, key, value)
        return article
