"""`CollectionService`: a service over one list of free-form JSON records, declared rather than coded.

Benchmarks that ship their own fixtures (Claw-Eval's `inbox.json`, `tickets.json`, ...) describe each
record only by example, and their tools name filters after record fields. Instead of one pydantic model
per fixture family, a collection service keeps the records as dicts and declares its operations
(`Op`): list with field filters, get by id, create, update, delete, and logged actions (send, share,
publish, ...) that change nothing but are recorded for graders. Worlds, reset/state, faults and call
counts come from the shared `Service` framework.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, ClassVar, Literal

from pydantic import BaseModel

from forge_eval.benchmarks.services._app import Call, Endpoint, Service
from forge_eval.benchmarks.services._records import next_id

OpKind = Literal["list", "get", "create", "update", "delete", "action"]

#: List arguments that steer the listing instead of matching a record field.
_LIMIT_KEYS = ("max_results", "limit")
_QUERY_KEYS = ("query", "keyword", "q", "search")
_FROM_KEYS = ("start_date", "date_from", "from_date", "since")
_TO_KEYS = ("end_date", "date_to", "to_date", "until")


class CollectionState(BaseModel):
    """A world: the records, and what each action endpoint was asked to do (in call order)."""

    records: list[dict[str, Any]] = []
    actions: dict[str, list[dict[str, Any]]] = {}


@dataclass(frozen=True)
class Op:
    """One endpoint of a collection service (all are `POST <path>` with a JSON body).

    Attributes:
        kind: list / get / create / update / delete, or "action" (recorded, state untouched).
        path: URL path, e.g. "/gmail/messages".
        name: Endpoint name for faults and call counts (default: derived from the path).
        fields: For "list", the record fields each listed item shows (empty = whole records).
        key: Response key of the listed records (default: the service's `plural`).
    """

    kind: OpKind
    path: str
    name: str = ""
    fields: tuple[str, ...] = ()
    key: str = ""

    @property
    def endpoint_name(self) -> str:
        return self.name or self.path.strip("/").replace("/", "_")


@dataclass(frozen=True)
class Alias:
    """A list filter whose argument name differs from the record field (`user` -> `attendees`)."""

    field: str
    match: Literal["equal", "contains"] = "equal"


class CollectionService(Service):
    """A declared record collection. Subclasses set the class attributes below.

    Attributes:
        id_field: Record id field (`message_id`); get/update/delete look it up in the body.
        id_prefix: Prefix of ids made by "create" (`evt_` -> `evt_009`).
        plural: Default response key of a listing (`messages`).
        date_fields: Record fields holding a date/time, first present one used for date filters.
        aliases: Filter argument -> record field, for arguments not named after a field.
        ops: The endpoints.
    """

    state_model = CollectionState
    id_field: ClassVar[str]
    id_prefix: ClassVar[str] = "rec_"
    plural: ClassVar[str] = "items"
    date_fields: ClassVar[tuple[str, ...]] = ("date", "start_time", "created_at", "published_at")
    aliases: ClassVar[dict[str, Alias]] = {}
    ops: ClassVar[tuple[Op, ...]]
    #: Extra handlers for endpoints no generic kind covers, by endpoint name.
    custom: ClassVar[dict[str, str]] = {}

    def endpoints(self) -> list[Endpoint]:
        handlers: dict[str, Callable[[Op], Callable[[Call], Awaitable[Any]]]] = {
            "list": self._list,
            "get": self._get,
            "create": self._create,
            "update": self._update,
            "delete": self._delete,
            "action": self._action,
        }
        return [
            Endpoint(op.endpoint_name, "POST", op.path, self._custom(op) or handlers[op.kind](op))
            for op in self.ops
        ]

    def _custom(self, op: Op) -> Callable[[Call], Awaitable[Any]] | None:
        method = self.custom.get(op.endpoint_name)
        return getattr(self, method) if method else None

    # -- the generic operations ------------------------------------------------------------------

    def _list(self, op: Op) -> Callable[[Call], Awaitable[Any]]:
        async def handle(call: Call) -> dict[str, Any]:
            state: CollectionState = call.state
            hits = self.select(state.records, call.body)
            shown = [{k: r[k] for k in op.fields if k in r} if op.fields else r for r in hits]
            return {op.key or self.plural: shown, "total": len(shown)}

        return handle

    def _get(self, op: Op) -> Callable[[Call], Awaitable[Any]]:
        async def handle(call: Call) -> dict[str, Any]:
            record = self.lookup(call.state, call.body)
            return record if "error" in record else copy.deepcopy(record)

        return handle

    def _create(self, op: Op) -> Callable[[Call], Awaitable[Any]]:
        async def handle(call: Call) -> dict[str, Any]:
            state: CollectionState = call.state
            new_id = next_id(self.id_prefix, [str(r.get(self.id_field, "")) for r in state.records])
            record = {self.id_field: new_id, **{k: v for k, v in call.body.items() if v is not None}}
            state.records.append(record)
            self.record_action(state, op, call.body, new_id)
            return {"status": "created", self.id_field: new_id, "record": record}

        return handle

    def _update(self, op: Op) -> Callable[[Call], Awaitable[Any]]:
        async def handle(call: Call) -> dict[str, Any]:
            state: CollectionState = call.state
            record = self.lookup(state, call.body)
            if "error" in record:
                return record
            changes = {k: v for k, v in call.body.items() if k != self.id_field and v is not None}
            record.update(changes)
            self.record_action(state, op, call.body, record[self.id_field])
            return {"status": "updated", "record": copy.deepcopy(record)}

        return handle

    def _delete(self, op: Op) -> Callable[[Call], Awaitable[Any]]:
        async def handle(call: Call) -> dict[str, Any]:
            state: CollectionState = call.state
            record = self.lookup(state, call.body)
            if "error" in record:
                return record
            state.records.remove(record)
            self.record_action(state, op, call.body, record[self.id_field])
            return {"status": "deleted", self.id_field: record[self.id_field]}

        return handle

    def _action(self, op: Op) -> Callable[[Call], Awaitable[Any]]:
        async def handle(call: Call) -> dict[str, Any]:
            state: CollectionState = call.state
            done = len(state.actions.get(op.endpoint_name, [])) + 1
            action_id = f"{op.endpoint_name}_{done:03d}"
            self.record_action(state, op, call.body, action_id)
            return {"status": "ok", "id": action_id}

        return handle

    # -- helpers subclasses use ------------------------------------------------------------------

    @staticmethod
    def record_action(state: CollectionState, op: Op, body: dict[str, Any], ref: str) -> None:
        state.actions.setdefault(op.endpoint_name, []).append({"id": ref, "request": copy.deepcopy(body)})

    def lookup(self, state: CollectionState, body: dict[str, Any]) -> dict[str, Any]:
        """The record whose id is in the body; a missing one is an `{"error": ...}` body.

        Claw-Eval's mocks answer an unknown id with HTTP 200 and an error text (not 404), and its
        robustness score counts only HTTP errors, so a wrong id must not count as a failed call.
        """
        key = str(body.get(self.id_field, "")).strip()
        if not key:
            return {"error": f"missing '{self.id_field}'"}
        for record in state.records:
            if str(record.get(self.id_field, "")).lower() == key.lower():
                return record
        return {"error": f"{self.id_field} {key} not found"}

    def date_of(self, record: dict[str, Any]) -> datetime | None:
        for name in self.date_fields:
            parsed = parse_time(record.get(name))
            if parsed is not None:
                return parsed
        return None

    def select(self, records: list[dict[str, Any]], body: dict[str, Any]) -> list[dict[str, Any]]:
        """Records matching every filter in `body`; unknown arguments are ignored, as the mocks do."""
        hits = list(records)
        for arg, value in body.items():
            if value is None or value == "" or arg in _LIMIT_KEYS:
                continue
            if arg in _QUERY_KEYS:
                hits = [r for r in hits if _text_match(r, str(value))]
            elif arg in _FROM_KEYS or arg in _TO_KEYS:
                bound = parse_time(value)
                if bound is not None:
                    hits = [r for r in hits if _in_range(self.date_of(r), bound, arg in _FROM_KEYS)]
            elif arg in ("days_back", "days"):
                hits = self._recent(hits, body, arg, value)
            elif arg == "date" and not any(arg in r for r in hits) and "days" not in body:
                hits = [r for r in hits if (d := self.date_of(r)) and d.date().isoformat() == str(value)[:10]]
            elif arg in self.aliases:
                alias = self.aliases[arg]
                hits = [r for r in hits if _field_match(r.get(alias.field), value, alias.match)]
            elif arg == "tag" and "tags" in _fields(hits):
                hits = [r for r in hits if _field_match(r.get("tags"), value, "equal")]
            elif arg in _fields(hits):
                hits = [r for r in hits if _field_match(r.get(arg), value, "equal")]
        limit = next((body[k] for k in _LIMIT_KEYS if isinstance(body.get(k), int) and body[k] > 0), None)
        return hits[:limit] if limit else hits

    def _recent(
        self, hits: list[dict[str, Any]], body: dict[str, Any], arg: str, value: Any
    ) -> list[dict[str, Any]]:
        # Fixture dates are fixed in the past; the upstream mocks shift them so the newest record is a
        # day old. Measuring the window back from the newest record is the same selection.
        if not isinstance(value, int | float) or value <= 0:
            return hits
        if arg == "days" and body.get("date"):
            start = parse_time(body["date"])
            if start is None:
                return hits
            end = start + timedelta(days=value)
            return [r for r in hits if (d := self.date_of(r)) and start <= d < end]
        dated = [d for r in hits if (d := self.date_of(r)) is not None]
        if not dated:
            return hits
        cutoff = max(dated) + timedelta(days=1) - timedelta(days=value)
        return [r for r in hits if (d := self.date_of(r)) is None or d >= cutoff]


def parse_time(value: Any) -> datetime | None:
    """A date or ISO timestamp as a naive datetime (time zones dropped: fixtures mix them)."""
    if not isinstance(value, str) or len(value) < 10:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).replace(tzinfo=None)
    except ValueError:
        return None


def _in_range(when: datetime | None, bound: datetime, lower: bool) -> bool:
    if when is None:
        return True
    if lower:
        return when >= bound
    return when.date() <= bound.date() if bound.time() == datetime.min.time() else when <= bound


def _fields(records: list[dict[str, Any]]) -> set[str]:
    return {k for r in records for k in r}


def _text_match(record: dict[str, Any], query: str) -> bool:
    """Any whitespace-separated query word occurs in some value (case-insensitive)."""
    text = " ".join(str(v) for v in record.values()).lower()
    words = query.lower().split()
    return not words or any(w in text for w in words)


def _field_match(actual: Any, wanted: Any, how: str) -> bool:
    if isinstance(actual, list):
        return any(_field_match(a, wanted, how) for a in actual)
    if isinstance(actual, bool) or isinstance(wanted, bool):
        return str(actual).lower() == str(wanted).lower()
    a, w = str(actual).strip().lower(), str(wanted).strip().lower()
    return w in a if how == "contains" else a == w
