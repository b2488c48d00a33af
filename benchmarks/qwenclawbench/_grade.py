"""Run a task's embedded `grade(transcript, workspace_path)` in a child Python process.

Upstream `exec`s the task code inside its own runner. The code is task material (it reads the agent's
workspace, may import anything), so here it runs in a separate interpreter with the workspace as its
working directory and a time limit: a crash, hang or non-dict result scores 0 instead of taking the
evaluation down. The interpreter is isolated (`-I`): the workspace is the agent's, and a `json.py` it left
there must not be imported in place of the standard library by this host process. The transcript is
OpenClaw's session event list (see `session_events`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool, ChatMessageUser

GRADE_TIMEOUT_S = 120

# Reads {"code", "transcript", "workspace"} on stdin, prints the numeric/bool part of grade()'s dict.
_RUNNER = """
import json, sys
job = json.load(sys.stdin)
namespace = {}
exec(job["code"], namespace)
result = namespace["grade"](job["transcript"], job["workspace"]) if callable(namespace.get("grade")) else None
if not isinstance(result, dict):
    result = {}
clean = {str(k): (v if isinstance(v, bool) else float(v))
         for k, v in result.items() if isinstance(v, (int, float))}
print("\\n@@GRADE@@" + json.dumps(clean))
"""


@dataclass(frozen=True)
class GradeOutcome:
    """What `grade()` returned (numeric entries only), or why it returned nothing usable."""

    scores: dict[str, float | bool]
    error: str = ""


def run_grade(
    code: str, transcript: list[dict[str, Any]], workspace: Path, timeout_s: float = GRADE_TIMEOUT_S
) -> GradeOutcome:
    if not code.strip():
        return GradeOutcome({}, "the task has no automated grading code")
    job = json.dumps({"code": code, "transcript": transcript, "workspace": str(workspace)})
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-c", _RUNNER],
            input=job,
            capture_output=True,
            text=True,
            cwd=workspace,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return GradeOutcome({}, f"grade() ran longer than {timeout_s:.0f} s")
    marker = done.stdout.rfind("@@GRADE@@")
    if done.returncode != 0 or marker < 0:
        return GradeOutcome({}, f"grade() failed: {done.stderr.strip()[-500:] or 'no output'}")
    return GradeOutcome(json.loads(done.stdout[marker + len("@@GRADE@@") :]))


def session_events(messages: list[ChatMessage]) -> list[dict[str, Any]]:
    """Inspect messages as OpenClaw session events, the transcript shape the `grade()` code reads."""
    events: list[dict[str, Any]] = []
    for m in messages:
        if isinstance(m, ChatMessageUser):
            message = {"role": "user", "content": [{"type": "text", "text": m.text}]}
        elif isinstance(m, ChatMessageAssistant):
            content: list[dict[str, Any]] = [{"type": "text", "text": m.text}] if m.text else []
            content += [
                {"type": "toolCall", "id": c.id, "name": c.function, "arguments": c.arguments}
                for c in m.tool_calls or []
            ]
            message = {"role": "assistant", "content": content}
        elif isinstance(m, ChatMessageTool):
            text = m.error.message if m.error else m.text
            message = {
                "role": "toolResult",
                "toolCallId": m.tool_call_id,
                "toolName": m.function,
                "content": [{"type": "text", "text": text}],
                "isError": m.error is not None,
            }
        else:
            continue
        events.append({"type": "message", "message": message})
    return events
