"""Files that are never seen half-written: one atomic, NaN-safe JSON writer for the whole code base.

Every JSON file forge-eval writes (results.json, run.json, behavior.json, proxy rollout records, ablation
state, ...) goes through `write_json`: the text goes to a hidden temporary file next to the target, which
then replaces the target in one `os.replace`, so a crash or `kill -9` leaves the old file or the new one,
never a torn one. JSON has no NaN or infinity: they are written as null (Python's `json` would write the
non-standard `NaN`, which other readers refuse). `forge_eval.rundir` re-exports both writers; they live at
the root so that the proxy and the model server can use them without importing pandas.
"""

from __future__ import annotations

import json
import math
import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

_DEFAULT_MODE = 0o666  # less the umask, as for any file `open()` creates


def json_safe(value: Any) -> Any:
    """`value` as plain JSON data: NaN and infinities become None, numpy scalars and arrays Python values,
    pydantic models their JSON dump, paths strings; anything else JSON cannot hold raises TypeError."""
    if isinstance(value, BaseModel):
        return json_safe(value.model_dump(mode="json"))
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "tolist") and not isinstance(value, str | bytes):  # numpy scalar or array
        return json_safe(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise TypeError(f"{type(value).__name__} cannot be written as JSON: {value!r}"[:200])


def write_text(
    path: str | os.PathLike[str], text: str | bytes, *, mode: int = _DEFAULT_MODE, sync: bool = False
) -> Path:
    """Write `text` to `path` atomically (temporary file in the same directory, then `os.replace`).

    Args:
        path: The target file; its directory must exist.
        text: The whole content (a str is written as UTF-8).
        mode: Permission bits of a newly created file (the umask applies), e.g. 0o600 for private records.
        sync: Put the content on disk (`fdatasync`) before the rename, so that after a power loss the
            name never points at an empty file (slower; the rename itself survives a process crash).

    Raises:
        OSError: the file could not be written; the target is unchanged and no temporary file is left.
    """
    target = Path(path)
    partial = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "wb") as out:  # a buffered write loops until all bytes are written or raises
            out.write(text.encode("utf-8") if isinstance(text, str) else text)
            if sync:
                out.flush()
                os.fdatasync(out.fileno())
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return target


def write_json(
    path: str | os.PathLike[str], data: Any, *, indent: int | None = 2, mode: int = _DEFAULT_MODE
) -> Path:
    """Write `data` (see `json_safe`) to `path` as JSON, atomically; NaN and infinities become null."""
    text = json.dumps(json_safe(data), indent=indent, ensure_ascii=False, allow_nan=False)
    return write_text(path, text, mode=mode)
