"""A scripted policy for forgelab through a harness: one `forge-tool` call in the harness's shell (or the
native `contacts_search` call where there is no shell), then an answer quoting what it printed.
Deterministic, so each harness's end-to-end run is fast and checkable."""

import json
from dataclasses import dataclass
from typing import Any

from forge_eval.proxy import ScriptedPolicy
from forge_eval.proxy._scripted import _text, _tool_turn

#: forgelab's contacts-phone task, solved with one lookup (its check: the answer holds the phone number).
TASK_ID = "contacts-phone"
COMMAND = "forge-tool contacts_search query='Dana Kim'"
#: Printed by `probe_command` when the sandbox cannot reach the address it tried.
UNREACHABLE = "UNREACHABLE"


def probe_command(url: str) -> str:
    """The lookup, then a try to reach `url` directly from the harness's shell (it should fail)."""
    probe = f"import urllib.request as u; u.urlopen('{url}', timeout=5); print('MODEL-SERVER-REACHED')"
    return f"{COMMAND}; python3 -c \"{probe}\" 2>/dev/null || echo {UNREACHABLE}"


@dataclass
class ForgeToolPolicy(ScriptedPolicy):
    """Runs `command` with the first shell tool offered; once a tool result is back, answers with it."""

    command: str = COMMAND

    def native_call(self, tools: list[dict[str, Any]]) -> tuple[str, str] | None:
        """The lookup as a native tool call, for a harness without a shell (react)."""
        offered = {t.get("function", {}).get("name") for t in tools}
        if "contacts_search" not in offered:
            return None
        return "contacts_search", json.dumps({"query": "Dana Kim"})

    def respond(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body.get("messages", [])
        tools = body.get("tools") or []
        results = [m for m in messages if m.get("role") == "tool"]
        if results:
            answer = f"Dana Kim's contact record: {_text(results[0].get('content'))}"
            submit = self.submit_call(tools, answer)  # a ReAct loop ends with its submit tool
            if submit is not None and len(results) == 1:
                return _tool_turn(messages, *submit)
            return {"message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}
        call = self.shell_call(tools, self.command) or self.native_call(tools)
        if call is None:
            return {"message": {"role": "assistant", "content": "no shell tool"}, "finish_reason": "stop"}
        return _tool_turn(messages, *call)
