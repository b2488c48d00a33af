"""Benchmark service tools (`<service>_<verb>`): which service object a call reads or writes.

The tool specs the benchmark recorded in the sample's metadata (`forge_eval.rundir.ToolSpec`: service,
read/write, the arguments that identify the object, where a creation returns the new object's id) are
used when they name the tool. Otherwise the name is
split into one of the task's services and a verb, and the verb decides (`x_list` reads, `x_create`
writes); the identifying arguments are then `id`, `*_id`, `path`, `name`, `key`, `number`, `sku`.
"""

import json
from collections.abc import Iterable, Mapping
from typing import Any

from forge_eval.analysis.behavior._access import Access, service_resource
from forge_eval.analysis.behavior._rules import CallAccess
from forge_eval.rundir import ToolSpec

_READ_VERBS = frozenset(
    {
        "get",
        "list",
        "search",
        "read",
        "view",
        "show",
        "find",
        "fetch",
        "query",
        "describe",
        "check",
        "status",
        "download",
        "count",
        "lookup",
    }
)
_WRITE_VERBS = frozenset(
    {
        "create",
        "update",
        "delete",
        "add",
        "remove",
        "set",
        "send",
        "post",
        "write",
        "edit",
        "move",
        "rename",
        "close",
        "reopen",
        "assign",
        "merge",
        "upload",
        "reply",
        "schedule",
        "cancel",
        "book",
        "pay",
        "transfer",
        "archive",
        "mark",
        "comment",
        "invite",
        "approve",
        "reject",
        "submit",
        "put",
        "patch",
        "insert",
        "append",
        "label",
        "tag",
        "star",
        "order",
    }
)
_ID_NAMES = frozenset({"id", "path", "name", "key", "number", "slug", "sku"})


def _guess(tool: str, services: Iterable[str]) -> ToolSpec | None:
    for service in sorted(services, key=len, reverse=True):
        if tool.startswith(service + "_"):
            verb = tool[len(service) + 1 :].split("_")[0]
            if verb in _READ_VERBS:
                return ToolSpec(tool, service, "read")
            if verb in _WRITE_VERBS:
                return ToolSpec(tool, service, "write")
            return None
    return None


def service_tool(tool: str, services: Iterable[str], specs: Mapping[str, ToolSpec]) -> ToolSpec | None:
    """The spec of `tool`: from `specs`, else guessed from the task's `services`; None if neither."""
    return specs.get(tool) or _guess(tool, services)


def _created_id(spec: ToolSpec, result: str | None) -> str | None:
    if not spec.result_id or not result:
        return None
    try:
        value: Any = json.loads(result)
    except ValueError:
        return None
    for key in spec.result_id.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return None if value is None or isinstance(value, dict | list) else str(value)


def service_access(spec: ToolSpec, args: Mapping[str, Any], result: str | None = None) -> CallAccess:
    """The call's access to the service object its identifying arguments (or its result) name."""
    names = spec.resource_args or tuple(k for k in args if k in _ID_NAMES or k.endswith("_id"))
    ids = [str(args[k]) for k in names if isinstance(args.get(k), str | int | float)]
    created = _created_id(spec, result)
    if created is not None:
        ids.append(created)
    return CallAccess(frozenset({spec.kind}), (Access(spec.kind, service_resource(spec.service, ids)),))
