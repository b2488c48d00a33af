"""Small typed accessors for harness bodies: a wrong type becomes a `BadRequest` naming the field."""

from typing import Any

from forge_eval.proxy._canonical import SAMPLING_KEYS, BadRequest


def field(body: dict[str, Any], name: str, kind: type | tuple[type, ...], default: Any = None) -> Any:
    value = body.get(name, default)
    if value is None or isinstance(value, kind):
        return value
    names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
    raise BadRequest(f"'{name}' must be {names}, got {type(value).__name__}")


def required(body: dict[str, Any], name: str, kind: type | tuple[type, ...]) -> Any:
    if name not in body or body[name] is None:
        raise BadRequest(f"missing required field '{name}'")
    return field(body, name, kind)


def model_of(body: dict[str, Any]) -> str:
    return field(body, "model", str) or ""


def client_sampling(body: dict[str, Any], *extra: str) -> dict[str, Any]:
    """The sampling parameters the harness asked for (recorded; the rollout's pinned ones are served)."""
    return {k: body[k] for k in (*SAMPLING_KEYS, *extra) if body.get(k) is not None}


def untranslated(body: dict[str, Any], translated: frozenset[str]) -> dict[str, Any]:
    """The body's fields outside `translated` (and the sampling keys): served as the harness sent them."""
    return {k: v for k, v in body.items() if k not in translated and k not in SAMPLING_KEYS}


def stop_list(value: Any) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(s, str) for s in value):
        return value
    raise BadRequest("'stop' must be a string or a list of strings")


def common_fields(body: dict[str, Any], max_tokens: tuple[str, ...], stop: str | None) -> dict[str, Any]:
    """The `CanonicalRequest` fields every API carries alike: the model alias, the token cap (the first of
    the `max_tokens` fields given), the stop strings (field `stop`), the client's sampling, streaming."""
    return {
        "model": model_of(body),
        "max_tokens": positive_int(body, *max_tokens),
        "stop": stop_list(body.get(stop)) if stop else None,
        "client_sampling": client_sampling(body),
        "stream": bool(body.get("stream")),
    }


def positive_int(body: dict[str, Any], *names: str) -> int | None:
    for name in names:
        value = body.get(name)
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise BadRequest(f"'{name}' must be a positive integer, got {value!r}")
        return value
    return None
