"""Run-wide settings of the harnesses that run their own binary (where records go, sandbox or not).

They travel in environment variables rather than task arguments: Inspect runs a task's solvers in the
same process, a run sets them around its `eval_set` (`harness_settings`), and a user can set them for a
plain `inspect eval` too. Neither is part of a task's identity, so a resumed run may change them.
"""

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

_RECORDS = "FORGE_PROXY_RECORDS"
_NO_SANDBOX = "FORGE_NO_SANDBOX"
_LEAN = "FORGE_HARNESS_LEAN"


@dataclass(frozen=True)
class HarnessSettings:
    """Attributes:
    records_dir: Where each sample's proxy appends its call records (None: a folder per sample in its
        workspace, deleted with it).
    sandbox: Run harness binaries in the local sandbox (the default); False runs them as plain host
        processes (`--no-sandbox`, with a warning).
    lean: Each harness's own small-prompt mode (Claude Code `--bare`, OpenClaw `--local-model-lean`,
        Codex without its agent/goal/image tools and with short base instructions), so that it fits
        a small local model's context (the embedded model serves 8192 tokens; Codex's own first
        request is ~10k). On for runs with the embedded model.
    """

    records_dir: Path | None = None
    sandbox: bool = True
    lean: bool = False


def current_settings() -> HarnessSettings:
    records = os.environ.get(_RECORDS)
    return HarnessSettings(
        records_dir=Path(records) if records else None,
        sandbox=os.environ.get(_NO_SANDBOX, "") in ("", "0"),
        lean=os.environ.get(_LEAN, "") not in ("", "0"),
    )


@contextlib.contextmanager
def harness_settings(
    records_dir: Path | None = None, sandbox: bool = True, lean: bool = False
) -> Iterator[HarnessSettings]:
    """Apply these settings for the block (restoring the previous ones after it)."""
    wanted = {
        _RECORDS: str(records_dir) if records_dir else None,
        _NO_SANDBOX: None if sandbox else "1",
        _LEAN: "1" if lean else None,
    }
    previous = {k: os.environ.get(k) for k in wanted}
    try:
        for key, value in wanted.items():
            _set(key, value)
        yield current_settings()
    finally:
        for key, value in previous.items():
            _set(key, value)


def _set(key: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(key, None)
    else:
        os.environ[key] = value
