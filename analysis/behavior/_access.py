"""Resource accesses: what a tool call reads or writes, and when two resources are the same.

A resource is a string: a file path (`/repo/a.py`, `src/b.py`, a glob such as `*.py`) or a service
object (`@mail:m3`). Self-verification needs "was this written thing read back?",
so matching is lenient where a transcript cannot be precise: a relative path matches an absolute path
that ends with it (the harness's working directory is rarely recorded), a glob matches what it names,
and a service read without identifying arguments (a search or listing) matches every object of
that service.
"""

import fnmatch
import posixpath
from dataclasses import dataclass
from typing import Literal

Op = Literal["read", "write"]
AccessKind = Literal["read", "write", "read_write", "other"]

_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True)
class Access:
    """One read or write of one resource, in the order the call performed them."""

    op: Op
    resource: str


def access_kind(ops: set[Op]) -> AccessKind:
    """The call's kind from the operations it performed (both -> `read_write`)."""
    if ops == {"read", "write"}:
        return "read_write"
    if ops:
        return next(iter(ops))
    return "other"


def normalize_path(path: str, cwd: str | None = None) -> str:
    """A path joined to `cwd` (when relative and known) and normalized (`a/./b/../c` -> `a/c`)."""
    if cwd and not path.startswith(("/", "~")):
        path = posixpath.join(cwd, path)
    return posixpath.normpath(path)


def service_resource(service: str, ids: list[str]) -> str:
    """The resource string of a service object: `@service:id,...` (sorted), `@service` for a listing.

    The `@` keeps service objects apart from file paths, which never start with it in practice. Ids
    are values only: the argument that names an object (`message_id`) and the key a creation
    returns it under (`id`) differ, the value is the same.
    """
    return f"@{service}:" + ",".join(sorted(ids)) if ids else f"@{service}"


def _path_matches(read: str, written: str) -> bool:
    if read == written:
        return True
    if _GLOB_CHARS & set(read):
        return fnmatch.fnmatchcase(written, read) or fnmatch.fnmatchcase(posixpath.basename(written), read)
    if read.startswith("/") != written.startswith("/"):
        absolute, relative = (read, written) if read.startswith("/") else (written, read)
        return absolute.endswith("/" + relative)
    # a directory listing or a recursive read covers what was written below it
    return written.startswith(read.rstrip("/") + "/")


def _service_matches(read: str, written: str) -> bool:
    read_service, _, read_ids = read.partition(":")
    written_service, _, written_ids = written.partition(":")
    if read_service != written_service:
        return False
    if not read_ids or not written_ids:
        return True
    return bool(set(read_ids.split(",")) & set(written_ids.split(",")))


def same_resource(read: str, written: str) -> bool:
    """Whether reading `read` reads back (part of) what writing `written` wrote."""
    read_is_service, written_is_service = read.startswith("@"), written.startswith("@")
    if read_is_service != written_is_service:
        return False
    if read_is_service:
        return _service_matches(read, written)
    return _path_matches(read, written)
