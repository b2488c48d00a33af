"""OpenClaw's session log as upstream reads it: `~/.openclaw/agents/<agent>/sessions/<session>.jsonl`.

Upstream's OpenClaw image wrote each session as a JSONL file, one event per line, which its
`_load_transcript` reads. The pinned npm OpenClaw (2026.9.6) keeps the same events (`session`,
`message`, `compaction`, ...: "original event JSON", its docs/reference/database-schemas/layout.md) in
its per-agent SQLite store, table `transcript_events`, in `seq` order, large ones zstd-compressed.
`export_sessions` writes them back out as those JSONL files, byte for byte the stored event text, each
file's modification time its last event's (upstream picks the newest file), so
that upstream's loader runs unchanged on them. This is the only step between OpenClaw's own record and
upstream's code; it adds, drops and reorders nothing.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import zstandard

from forge_eval._errors import ForgeError

AGENT_DB = Path("agent") / "openclaw-agent.sqlite"


def _events(db: Path) -> dict[str, tuple[list[str], int]]:
    """Session id -> its events' JSON texts in `seq` order, and when the last was stored (ms)."""
    try:
        connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    except sqlite3.Error as e:
        raise ForgeError(f"cannot open OpenClaw's session store {db}: {e}") from None
    sessions: dict[str, tuple[list[str], int]] = {}
    decompress = zstandard.ZstdDecompressor()
    try:
        rows = connection.execute(
            "SELECT session_id, event_json, event_zstd, created_at FROM transcript_events"
            " ORDER BY session_id, seq"
        )
        for session_id, text, packed, created in rows:
            if text is None:
                text = decompress.decompress(packed).decode("utf-8")
            events, last = sessions.get(str(session_id), ([], 0))
            events.append(text)
            sessions[str(session_id)] = (events, max(last, int(created)))
    except sqlite3.Error as e:
        raise ForgeError(f"cannot read OpenClaw's session store {db}: {e}") from None
    finally:
        connection.close()
    return sessions


def _own_file(path: Path, root: Path) -> bool:
    """A regular file reached without a symlink, inside `root` (the sandbox wrote everything under it)."""
    return path.is_file() and not path.is_symlink() and path.resolve().is_relative_to(root.resolve())


def export_sessions(state_dir: Path, out_dir: Path) -> list[Path]:
    """Write every agent's stored sessions under `state_dir` (the sandbox's `~/.openclaw`) into `out_dir`
    as `agents/<agent>/sessions/<session>.jsonl`; returns the files written (none: no store).

    `state_dir` is the agent's: nothing is written there, and its store is copied out (checked for
    symlinks: the sandbox may have left one pointing at a host file) before SQLite opens it.
    """
    written = []
    agents = state_dir / "agents"
    if state_dir.is_symlink() or agents.is_symlink() or not agents.is_dir():
        return written
    for agent in sorted(agents.iterdir()):
        db = agent / AGENT_DB
        if agent.is_symlink() or not _own_file(db, state_dir):
            continue
        copy = out_dir / "store" / agent.name / db.name
        copy.parent.mkdir(parents=True, exist_ok=True)
        for suffix in ("", "-wal", "-shm"):
            part = db.with_name(db.name + suffix)
            if _own_file(part, state_dir):
                shutil.copyfile(part, copy.with_name(copy.name + suffix))
        sessions = out_dir / "agents" / agent.name / "sessions"
        sessions.mkdir(parents=True, exist_ok=True)
        for session_id, (events, last_ms) in _events(copy).items():
            target = sessions / f"{Path(session_id).name}.jsonl"
            target.write_text("".join(f"{e}\n" for e in events), encoding="utf-8")
            # as a live JSONL file: modified when its last event was written (upstream picks the newest)
            os.utime(target, (last_ms / 1000, last_ms / 1000))
            written.append(target)
    return written
