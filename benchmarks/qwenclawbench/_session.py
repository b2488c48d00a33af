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


def export_sessions(state_dir: Path) -> list[Path]:
    """Write every agent's stored sessions under `state_dir` (OpenClaw's `~/.openclaw`) as
    `agents/<agent>/sessions/<session>.jsonl`; returns the files written (none: no store)."""
    written = []
    agents = state_dir / "agents"
    for agent in sorted(agents.iterdir()) if agents.is_dir() else []:
        db = agent / AGENT_DB
        if not db.is_file():
            continue
        sessions = agent / "sessions"
        sessions.mkdir(exist_ok=True)
        for session_id, (events, last_ms) in _events(db).items():
            target = sessions / f"{Path(session_id).name}.jsonl"
            target.write_text("".join(f"{e}\n" for e in events), encoding="utf-8")
            # as a live JSONL file: modified when its last event was written (upstream picks the newest)
            os.utime(target, (last_ms / 1000, last_ms / 1000))
            written.append(target)
    return written
