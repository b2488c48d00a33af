"""A scripted policy for forgelab through a harness: one `forge-tool` call in the harness's shell, then an
answer quoting what it printed. Deterministic, so each harness's end-to-end run is fast and checkable."""

from dataclasses import dataclass
from typing import Any

from forge_eval.training.proxy import ScriptedPolicy
from forge_eval.training.proxy._scripted import _text, _tool_turn

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

    def respond(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body.get("messages", [])
        results = [m for m in messages if m.get("role") == "tool"]
        if results:
            answer = f"Dana Kim's contact record: {_text(results[-1].get('content'))}"
            return {"message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}
        call = self.shell_call(body.get("tools") or [], self.command)
        if call is None:
            return {"message": {"role": "assistant", "content": "no shell tool"}, "finish_reason": "stop"}
        return _tool_turn(messages, *call)
