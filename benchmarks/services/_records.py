"""Helpers the services share for record collections: lookup by id, new ids, keyword search."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from forge_eval.benchmarks.services._app import Call, Service, ServiceHTTPError, endpoint, not_found

R = TypeVar("R")

_WORD = re.compile(r"[a-z0-9@._-]+")
# Words too common to discriminate between records; small models pad queries with them.
_STOPWORDS = frozenset(
    {"a", "an", "and", "any", "are", "as", "at", "be", "by", "can", "find", "for", "from", "get", "have",
     "i", "in", "is", "it", "me", "my", "of", "on", "or", "please", "show", "the", "this", "to", "what",
     "when", "where", "which", "who", "with", "about", "all"}
)


def lowercase(value: Any) -> Any:
    """Strip and lower-case strings (enum-like fields then accept "High" as "high")."""
    return value.strip().lower() if isinstance(value, str) else value


def find(records: Sequence[R], key: str, kind: str, id_of: Callable[[R], str]) -> R:
    """The record whose id equals `key` (case-insensitive), or a 404."""
    wanted = key.strip().lower()
    for record in records:
        if id_of(record).lower() == wanted:
            return record
    raise not_found(kind, key)


def record(call: Call, collection: str, kind: str, key: str = "id") -> Any:
    """The record of the state's list `collection` whose field `key` equals the path's `{key}`, or a 404."""
    return find(getattr(call.state, collection), call.path[key], kind, lambda r: getattr(r, key))


Method = Callable[[Service, Call], Any]


def get_endpoint(path: str, collection: str, kind: str, key: str = "id") -> Method:
    """`GET path`: one record of `collection` by its key (`record`). The services' "get" operations
    differ only in these names, so they are declared as data: `get = get_endpoint(...)`."""

    async def get(self: Service, call: Call) -> Any:
        return record(call, collection, kind, key)

    return endpoint("GET", path)(get)


def update_endpoint(
    path: str, collection: str, kind: str, changes: type[BaseModel], key: str = "id"
) -> Method:
    """`PATCH path`: one record of `collection` with the fields the body sets (validated by `changes`;
    fields it leaves out stay as they are)."""

    async def update(self: Service, call: Call) -> Any:
        return changed(record(call, collection, kind, key), call.parse(changes))

    return endpoint("PATCH", path)(update)


def next_id(prefix: str, existing: Sequence[str], start: int = 1) -> str:
    """`prefix` + one more than the largest number among ids with that prefix."""
    numbers = [int(m.group(1)) for i in existing if (m := re.fullmatch(re.escape(prefix) + r"(\d+)", i))]
    return f"{prefix}{max(numbers, default=start - 1) + 1}"


def terms(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOPWORDS]


def search(records: Sequence[R], query: str, text_of: Callable[[R], str]) -> list[R]:
    """Records matching any query term, best (most terms matched) first; empty query = all.

    Any-term matching with ranking (not all-terms) because small models add words to queries
    ("invoice amount due") that the right record does not contain.
    """
    wanted = terms(query)
    if not wanted:
        return list(records)
    scored = []
    for index, record in enumerate(records):
        text = text_of(record).lower()
        hits = sum(1 for w in wanted if w in text)
        if hits:
            scored.append((-hits, index, record))
    return [record for _, _, record in sorted(scored, key=lambda t: (t[0], t[1]))]


def changed(record: R, changes: BaseModel) -> R:
    """`record` with the fields `changes` sets (the others, None there, stay as they are)."""
    for key, value in changes.model_dump(exclude_none=True).items():
        setattr(record, key, value)
    return record


def require_nonempty(value: str, field: str) -> str:
    if not value.strip():
        raise ServiceHTTPError(422, f"invalid request: {field} must not be empty")
    return value
