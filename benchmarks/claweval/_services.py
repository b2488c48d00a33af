"""Our own mock services for Claw-Eval's task tools, on the shared local-services framework.

Families: gmail, calendar, todo, contacts, finance, notes, kb, helpdesk, inventory, rss, crm, config,
scheduler, the offline `web` (search/fetch over the task's own result and page fixtures) and `ocr`
(the task document's pre-extracted text).

Claw-Eval's tasks call `POST http://localhost:<port>/<service>/<op>` endpoints of FastAPI mocks that
load the task's fixture file. Each family here is a `CollectionService` declared by its id field and
operations, with the same URL paths and argument names as the tasks' `tool_endpoints`, so a task's
tools run unchanged against them. They are registered in `CLAW_SERVICES` (their names overlap
forgelab's services, which differ in shape).

Where these can differ from the upstream mocks (whose code is not part of the task data):
listings show whole records unless a field list is given below; filters match fields by equality
(case-insensitive; list fields by membership); an unknown id answers HTTP 200 with an `error` text.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from forge_eval._registry import Registry
from forge_eval.benchmarks.services import (
    Alias,
    Call,
    CollectionService,
    CollectionState,
    Endpoint,
    Op,
    Service,
)


class Gmail(CollectionService):
    name = "gmail"
    description = "mailbox: list, read, send, save drafts"
    id_field = "message_id"
    id_prefix = "msg_"
    plural = "messages"
    date_fields = ("date",)
    ops = (
        Op("list", "/gmail/messages", fields=("message_id", "from", "subject", "date", "is_read", "labels")),
        Op("get", "/gmail/messages/get"),
        Op("action", "/gmail/send"),
        Op("action", "/gmail/drafts/save"),
    )


class Calendar(CollectionService):
    name = "calendar"
    description = "calendar events: list, get, create, delete, per-attendee view"
    id_field = "event_id"
    id_prefix = "evt_"
    plural = "events"
    date_fields = ("start_time", "date")
    aliases = {"user": Alias("attendees", "contains")}
    ops = (
        Op("list", "/calendar/events"),
        Op("get", "/calendar/events/get"),
        Op("create", "/calendar/events/create"),
        Op("delete", "/calendar/events/delete"),
        Op("list", "/calendar/user_events"),
    )


class Todo(CollectionService):
    name = "todo"
    description = "to-do tasks: list, get, create, update, delete"
    id_field = "task_id"
    id_prefix = "todo_"
    plural = "tasks"
    date_fields = ("due_date", "created_at")
    ops = (
        Op("list", "/todo/tasks"),
        Op("get", "/todo/tasks/get"),
        Op("create", "/todo/tasks/create"),
        Op("update", "/todo/tasks/update"),
        Op("delete", "/todo/tasks/delete"),
    )


class Contacts(CollectionService):
    name = "contacts"
    description = "company directory: search, get, message a contact"
    id_field = "contact_id"
    id_prefix = "c_"
    plural = "contacts"
    aliases = {"department": Alias("department", "contains")}
    ops = (
        Op("list", "/contacts/search"),
        Op("get", "/contacts/get"),
        Op("action", "/contacts/send_message"),
    )


class Finance(CollectionService):
    name = "finance"
    description = "transactions: list by date, get, submit a report"
    id_field = "transaction_id"
    id_prefix = "txn_"
    plural = "transactions"
    date_fields = ("date",)
    ops = (
        Op("list", "/finance/transactions"),
        Op("get", "/finance/transactions/get"),
        Op("action", "/finance/report/submit"),
    )


class Notes(CollectionService):
    name = "notes"
    description = "meeting notes: list, get, share"
    id_field = "note_id"
    id_prefix = "note_"
    plural = "notes"
    date_fields = ("created_at", "date")
    ops = (
        Op("list", "/notes/list", fields=("note_id", "title", "created_at", "participants", "tags")),
        Op("get", "/notes/get"),
        Op("action", "/notes/share"),
    )


class Kb(CollectionService):
    name = "kb"
    description = "knowledge base: search, get, update articles"
    id_field = "article_id"
    id_prefix = "kb_"
    plural = "articles"
    date_fields = ("updated_at", "created_at")
    ops = (
        Op("list", "/kb/search", fields=("article_id", "title", "category", "tags", "updated_at")),
        Op("get", "/kb/articles/get"),
        Op("update", "/kb/articles/update"),
    )


class Helpdesk(CollectionService):
    name = "helpdesk"
    description = "support tickets: list, get, update, close"
    id_field = "ticket_id"
    id_prefix = "TK-"
    plural = "tickets"
    date_fields = ("created_at",)
    ops = (
        Op("list", "/helpdesk/tickets"),
        Op("get", "/helpdesk/tickets/get"),
        Op("update", "/helpdesk/tickets/update"),
        Op("update", "/helpdesk/tickets/close"),
    )
    custom = {"helpdesk_tickets_close": "close"}

    async def close(self, call: Call) -> dict[str, Any]:
        """Close = an update that also sets the status (the resolution text is kept on the ticket)."""
        state: CollectionState = call.state
        record = self.lookup(state, call.body)
        if "error" in record:
            return record
        record.update({k: v for k, v in call.body.items() if k != self.id_field and v is not None})
        record["status"] = "closed"
        close = next(op for op in self.ops if op.endpoint_name == "helpdesk_tickets_close")
        self.record_action(state, close, call.body, record[self.id_field])
        return {"status": "closed", "record": dict(record)}


class Inventory(CollectionService):
    name = "inventory"
    description = "products and stock: list, get, place a purchase order"
    id_field = "product_id"
    id_prefix = "SKU-"
    plural = "products"
    ops = (
        Op("list", "/inventory/products"),
        Op("get", "/inventory/products/get"),
        Op("action", "/inventory/orders/create"),
    )


class Rss(CollectionService):
    name = "rss"
    description = "news feeds: list feeds and articles, read, publish a newsletter"
    id_field = "article_id"
    id_prefix = "rss_"
    plural = "articles"
    date_fields = ("published_at",)
    aliases = {"feed_name": Alias("source", "contains"), "source": Alias("source", "contains")}
    ops = (
        Op(
            "list",
            "/rss/articles",
            fields=("article_id", "title", "source", "category", "published_at", "summary"),
        ),
        Op("get", "/rss/articles/get"),
        Op("list", "/rss/feeds"),
        Op("get", "/rss/feeds/get"),
        Op("action", "/rss/publish"),
    )
    custom = {"rss_feeds": "feeds", "rss_feeds_get": "feed"}

    @staticmethod
    def _feeds(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # The fixtures hold articles only; a feed is the set of articles of one source.
        by_source: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for record in records:
            by_source[str(record.get("source", "unknown"))].append(record)
        return [
            {
                "feed_id": f"feed_{i:03d}",
                "name": source,
                "categories": sorted({str(a.get("category", "")) for a in articles} - {""}),
                "article_count": len(articles),
            }
            for i, (source, articles) in enumerate(sorted(by_source.items()), start=1)
        ]

    async def feeds(self, call: Call) -> dict[str, Any]:
        feeds = self._feeds(call.state.records)
        wanted = str(call.body.get("category") or "").lower()
        if wanted:
            feeds = [f for f in feeds if any(wanted == c.lower() for c in f["categories"])]
        return {"feeds": feeds, "total": len(feeds)}

    async def feed(self, call: Call) -> dict[str, Any]:
        key = str(call.body.get("feed_id", "")).strip().lower()
        for feed in self._feeds(call.state.records):
            if key in (feed["feed_id"].lower(), feed["name"].lower()):
                articles = [r for r in call.state.records if str(r.get("source")) == feed["name"]]
                return {
                    **feed,
                    "articles": [
                        {k: a.get(k) for k in ("article_id", "title", "published_at")} for a in articles
                    ],
                }
        return {"error": f"feed_id {key} not found"}


class Crm(CollectionService):
    name = "crm"
    description = "customers: list, get, export a report"
    id_field = "customer_id"
    id_prefix = "CUS-"
    plural = "customers"
    date_fields = ("last_contact_date",)
    ops = (
        Op("list", "/crm/customers"),
        Op("get", "/crm/customers/get"),
        Op("action", "/crm/export"),
    )


class Config(CollectionService):
    name = "config"
    description = "integration settings: list, get, update, notify"
    id_field = "integration_id"
    id_prefix = "INT-"
    plural = "integrations"
    date_fields = ("last_verified",)
    aliases = {"type": Alias("service")}
    ops = (
        Op("list", "/config/integrations"),
        Op("get", "/config/integrations/get"),
        Op("update", "/config/integrations/update"),
        Op("action", "/config/notify"),
    )


class Scheduler(CollectionService):
    name = "scheduler"
    description = "scheduled jobs: list, get, create, update, delete, run history"
    id_field = "job_id"
    id_prefix = "JOB-"
    plural = "jobs"
    date_fields = ("last_run",)
    aliases = {"status": Alias("last_status")}
    ops = (
        Op("list", "/scheduler/jobs"),
        Op("get", "/scheduler/jobs/get"),
        Op("create", "/scheduler/jobs/create"),
        Op("update", "/scheduler/jobs/update"),
        Op("delete", "/scheduler/jobs/delete"),
        Op("get", "/scheduler/jobs/history"),
    )
    custom = {"scheduler_jobs_history": "history"}

    async def history(self, call: Call) -> dict[str, Any]:
        """A job's runs: its `history`/`run_history` records, else its last run."""
        record = self.lookup(call.state, call.body)
        if "error" in record:
            return record
        runs = record.get("history") or record.get("run_history")
        if runs is None:
            runs = [
                {
                    "run_at": record.get("last_run"),
                    "status": record.get("last_status"),
                    **({"error": record["last_error"]} if record.get("last_error") else {}),
                }
            ]
        limit = call.body.get("limit")
        runs = runs[:limit] if isinstance(limit, int) and limit > 0 else runs
        return {"job_id": record[self.id_field], "history": runs, "total": len(runs)}


class WebState(CollectionState):
    """Search results (the records) plus the pages `web_fetch` can return."""

    pages: list[dict[str, Any]] = []


class Web(CollectionService):
    """A fixed, offline web: search over the task's result list, fetch of the task's pages."""

    name = "web"
    description = "offline web search and fetch over the task's fixtures, notifications"
    state_model = WebState
    id_field = "url"
    plural = "results"
    date_fields = ("published_at",)
    #: Fixture env var -> state field (the other services have one fixture, loaded as records).
    fixture_fields = {"WEB_SEARCH_FIXTURES": "records", "WEB_FETCH_FIXTURES": "pages"}
    ops = (
        Op("list", "/web/search"),
        Op("get", "/web/fetch"),
        Op("action", "/web/notify"),
    )
    custom = {"web_search": "search", "web_fetch": "fetch"}

    async def search(self, call: Call) -> dict[str, Any]:
        """Results ranked by how many query words their title, snippet or keywords contain."""
        words = str(call.body.get("query", "")).lower().split()
        ranked = []
        for index, result in enumerate(call.state.records):
            text = " ".join(
                str(result.get(k, "")) for k in ("title", "snippet", "keywords", "source")
            ).lower()
            hits = sum(w in text for w in words)
            if hits or not words:
                ranked.append((-hits, index, result))
        limit = call.body.get("max_results")
        chosen = [r for _, _, r in sorted(ranked, key=lambda t: (t[0], t[1]))]
        chosen = chosen[:limit] if isinstance(limit, int) and limit > 0 else chosen
        shown = [{k: v for k, v in r.items() if k != "keywords"} for r in chosen]
        return {"results": shown, "total": len(shown)}

    async def fetch(self, call: Call) -> dict[str, Any]:
        url = str(call.body.get("url", "")).strip().rstrip("/")
        for page in call.state.pages:
            if str(page.get("url", "")).rstrip("/") == url:
                return dict(page)
        return {"url": url, "status_code": 404, "error": f"page {url} not found"}


class OcrState(BaseModel):
    text: str = ""


class Ocr(Service):
    """OCR over the task's pre-extracted text: upstream's mock answers every extract call, whatever the
    image path, with the text of its fixture file(s) (OCR_FILENAME, or OCR_FILENAMES joined with a
    `--- Document i: <name> ---` line before each), at confidence 0.95."""

    name = "ocr"
    description = "OCR: the task document's extracted text"
    state_model = OcrState

    def endpoints(self) -> list[Endpoint]:
        return [Endpoint("extract", "POST", "/ocr/extract", self.extract)]

    async def extract(self, call: Call) -> dict[str, Any]:
        return {"text": call.state.text, "confidence": 0.95, "language": "mixed"}

    @staticmethod
    def files(root: Path, env: dict[str, Any]) -> list[Path]:
        """The text fixtures a task's OCR service serves (env paths are relative to the upstream root)."""
        folder = root / str(env.get("OCR_FIXTURES", "")) / "ocr"
        names = [n.strip() for n in str(env.get("OCR_FILENAMES", "")).split(",") if n.strip()]
        return [folder / n for n in names or [str(env.get("OCR_FILENAME", ""))]]

    @staticmethod
    def state(files: list[Path]) -> dict[str, Any]:
        if len(files) == 1:
            return {"text": files[0].read_text(encoding="utf-8")}
        parts = (
            f"--- Document {i}: {f.name} ---\n{f.read_text(encoding='utf-8')}" for i, f in enumerate(files, 1)
        )
        return {"text": "\n\n".join(parts)}


def family(service: str) -> str:
    """Our service serving a task's service: tasks name their OCR mock per task (ocr_paper, ocr_t50)."""
    return "ocr" if service.startswith("ocr_") else service


CLAW_SERVICES: Registry[Service] = Registry("Claw-Eval service")
for _service in (
    Gmail(),
    Calendar(),
    Todo(),
    Contacts(),
    Finance(),
    Notes(),
    Kb(),
    Helpdesk(),
    Inventory(),
    Rss(),
    Crm(),
    Config(),
    Scheduler(),
    Web(),
    Ocr(),
):
    CLAW_SERVICES.register(_service.name, _service)


def endpoint_paths() -> dict[str, str]:
    """URL path -> service name, for every endpoint our mocks serve."""
    return {e.path: name for name, service in CLAW_SERVICES.items() for e in service.endpoints()}


def service_for(path: str) -> str | None:
    """The service a tool's URL path goes to: the one serving it, else the one its first segment names
    (a route the upstream mock lacks too, e.g. T075's /gmail/contacts/search: both answer HTTP 404)."""
    served = endpoint_paths()
    if path in served:
        return served[path]
    first = path.strip("/").split("/", 1)[0]
    return first if first in CLAW_SERVICES.names() else None
