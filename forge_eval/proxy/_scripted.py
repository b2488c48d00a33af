"""A deterministic scripted upstream: an OpenAI-compatible server driven by a scripted policy.

Not a model and not a mock of the proxy or of a harness: a tiny policy that solves "create FILE
containing TEXT" tasks the way a model would (one shell tool call, then a final answer), so that real
harnesses can run end to end through the proxy quickly and reproducibly. It also emulates vLLM's
`return_token_ids`/logprobs fields and can inject failures and delays for the proxy's retry tests.
"""

import asyncio
import json
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from forge_eval.proxy._json import dumps, loads

TASK = re.compile(
    r"create (?:a file )?(?:named )?([\w./-]+) containing ['\"]?([^'\"\n]+?)['\"]?(?:$|\n|\.\s)"
)
# shell tools of the harnesses, most specific first: (tool name, argument that holds the command)
SHELL_TOOLS = (
    ("exec_command", "cmd"),
    ("Bash", "command"),
    ("exec", "command"),
    ("shell", "command"),
    ("bash", "command"),
    ("run_shell_command", "command"),
)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


@dataclass
class ScriptedPolicy:
    """Decides the next assistant turn from the conversation alone (no state between calls).

    Args:
        final_answer: The answer once a tool result is in the conversation (`{path}` is filled in).
        patch_tool: Name of a freeform patch tool to prefer over the shell when offered (e.g. Codex's
            `apply_patch`, a Responses `custom` tool).
    """

    final_answer: str = "Done: created {path}."
    patch_tool: str | None = None

    def patch_call(self, tools: list[dict[str, Any]], path: str, content: str) -> tuple[str, str] | None:
        """(tool name, JSON arguments) adding the file with the freeform `patch_tool` (Codex apply_patch)."""
        for tool in tools:
            function = tool.get("function", {})
            if function.get("name") == self.patch_tool and "input" in function.get("parameters", {}).get(
                "properties", {}
            ):
                patch = f"*** Begin Patch\n*** Add File: {path}\n+{content}\n*** End Patch\n"
                return function["name"], json.dumps({"input": patch})
        return None

    def task(self, messages: list[dict[str, Any]]) -> tuple[int, str, str] | None:
        """(message index, path, content) of the last user message that states a file task."""
        for i in range(len(messages) - 1, -1, -1):
            if messages[i].get("role") == "user":
                found = TASK.findall(_text(messages[i].get("content")))
                if found:
                    path, content = found[-1]
                    return i, path, content.strip()
        return None

    def shell_call(self, tools: list[dict[str, Any]], command: str) -> tuple[str, str] | None:
        """(tool name, JSON arguments) running `command` with the first shell tool offered."""
        offered = {t.get("function", {}).get("name"): t.get("function", {}) for t in tools}
        for name, argument in SHELL_TOOLS:
            if name in offered:
                properties = offered[name].get("parameters", {}).get("properties", {})
                argument = next((a for a in (argument, "cmd", "command") if a in properties), argument)
                schema = properties.get(argument, {})
                value: Any = ["bash", "-lc", command] if schema.get("type") == "array" else command
                return name, json.dumps({argument: value})
        return None

    def submit_call(self, tools: list[dict[str, Any]], answer: str) -> tuple[str, str] | None:
        """A ReAct loop ends with its `submit` tool rather than a plain answer."""
        for tool in tools:
            function = tool.get("function", {})
            if function.get("name") == "submit":
                properties = list(function.get("parameters", {}).get("properties", {})) or ["answer"]
                return "submit", json.dumps({properties[0]: answer})
        return None

    def respond(self, body: dict[str, Any]) -> dict[str, Any]:
        """The assistant message and finish reason for one chat request."""
        messages = body.get("messages", [])
        task = self.task(messages)
        if task is None:
            return {"message": {"role": "assistant", "content": "OK."}, "finish_reason": "stop"}
        index, path, content = task
        tools = body.get("tools") or []
        if any(m.get("role") == "tool" for m in messages[index + 1 :]):
            answer = self.final_answer.format(path=path)
            submit = self.submit_call(tools, answer)
            if submit is not None and not any(_called(m, "submit") for m in messages[index + 1 :]):
                return _tool_turn(messages, *submit)
            return {"message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}
        command = f"printf '%s' {shlex.quote(content)} > {shlex.quote(path)}"
        call = self.patch_call(tools, path, content) if self.patch_tool else None
        call = call or self.shell_call(tools, command)
        if call is None:
            return {"message": {"role": "assistant", "content": f"Run: {command}"}, "finish_reason": "stop"}
        return _tool_turn(messages, *call)


def _called(message: dict[str, Any], name: str) -> bool:
    return any(c.get("function", {}).get("name") == name for c in message.get("tool_calls") or [])


def _tool_turn(messages: list[dict[str, Any]], name: str, arguments: str) -> dict[str, Any]:
    tool_call = {
        "id": f"call_{len(messages):04d}",
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }
    return {
        "message": {"role": "assistant", "content": None, "tool_calls": [tool_call]},
        "finish_reason": "tool_calls",
    }


def _json(answer: dict[str, Any]) -> Response:
    """An answer written with orjson: with token ids and logprobs it is ~11 KB, and the upstream shares
    the cores with the proxy it stands in for a GPU server to (bench/proxy_overhead.py)."""
    return Response(dumps(answer), media_type="application/json")


@dataclass
class ScriptedUpstream:
    """The server around a `ScriptedPolicy`, with failure injection. Mutable while serving (tests)."""

    policy: ScriptedPolicy = field(default_factory=ScriptedPolicy)
    model: str = "scripted-policy"
    fail_next: int = 0
    fail_status: int = 503
    fail_message: str = "scripted failure"
    delay_s: float = 0.0
    reject_token_fields: bool = False
    requests: list[dict[str, Any]] = field(default_factory=list)
    keep_requests: bool = True

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v1/chat/completions", self.chat, methods=["POST"]),
                Route("/v1/completions", self.completions, methods=["POST"]),
                Route("/v1/models", self.models, methods=["GET"]),
                Route("/tokenize", self.tokenize, methods=["POST"]),
            ]
        )

    async def _admit(self, request: Request) -> tuple[dict[str, Any] | None, Response | None]:
        body = loads(await request.body())
        if self.keep_requests:
            self.requests.append(body)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if self.fail_next > 0:
            self.fail_next -= 1
            error = {"error": {"message": self.fail_message, "type": "server_error"}}
            return None, JSONResponse(error, status_code=self.fail_status)
        if self.reject_token_fields and "return_token_ids" in body:
            error = {"error": {"message": "unknown field: return_token_ids", "type": "invalid_request_error"}}
            return None, JSONResponse(error, status_code=400)
        return body, None

    def _tokens(
        self,
        body: dict[str, Any],
        prompt: str,
        completion: str,
        choice: dict[str, Any],
        answer: dict[str, Any],
        chat: bool,
    ) -> None:
        """vLLM-style token fields: byte-level ids of the texts (deterministic), when asked for."""
        completion_ids = list(completion.encode())
        if body.get("return_token_ids"):
            answer["prompt_token_ids"] = list(prompt.encode()[-512:])
            choice["token_ids"] = completion_ids
        if body.get("logprobs") is not None and body["logprobs"] is not False:  # 0 asks for them too
            values = [-0.01 * (1 + i % 7) for i in range(len(completion_ids))]
            if chat:
                choice["logprobs"] = {
                    "content": [
                        {"token": chr(t), "logprob": v, "bytes": [t], "top_logprobs": []}
                        for t, v in zip(completion_ids, values, strict=True)
                    ]
                }
            else:
                choice["logprobs"] = {"tokens": [chr(t) for t in completion_ids], "token_logprobs": values}

    def _answer(
        self, body: dict[str, Any], prompt: str, completion: str, choice: dict[str, Any], chat: bool
    ) -> Response:
        """The whole answer around its one `choice`: usage (about 4 characters a prompt token, a byte a
        completion token) and, when asked for, the token fields."""
        prompt_tokens, completion_tokens = len(prompt) // 4, len(completion.encode())
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        answer: dict[str, Any] = {
            "id": f"chatcmpl-{len(self.requests)}" if chat else "cmpl-scripted",
            "object": "chat.completion" if chat else "text_completion",
            "created": 0,
            "model": self.model,
            "choices": [choice],
            "usage": usage,
        }
        self._tokens(body, prompt, completion, choice, answer, chat)
        return _json(answer)

    async def chat(self, request: Request) -> Response:
        body, refused = await self._admit(request)
        if refused is not None or body is None:
            return refused or Response(status_code=500)
        decision = self.policy.respond(body)
        message = decision["message"]
        completion = message.get("content") or json.dumps(message.get("tool_calls"))
        prompt = json.dumps(body.get("messages", []))
        choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": decision["finish_reason"]}
        return self._answer(body, prompt, completion, choice, chat=True)

    async def completions(self, request: Request) -> Response:
        body, refused = await self._admit(request)
        if refused is not None or body is None:
            return refused or Response(status_code=500)
        prompt = body.get("prompt")
        prompt_text = prompt if isinstance(prompt, str) else " ".join(map(str, prompt or []))
        text = f" [{len(prompt_text.split())} words]"
        choice: dict[str, Any] = {"index": 0, "text": text, "logprobs": None, "finish_reason": "stop"}
        return self._answer(body, prompt_text, text, choice, chat=False)

    async def models(self, request: Request) -> Response:
        return JSONResponse(
            {"object": "list", "data": [{"id": self.model, "object": "model", "owned_by": "forge"}]}
        )

    async def tokenize(self, request: Request) -> Response:
        body = await request.json()
        text = json.dumps(body.get("messages")) if "messages" in body else str(body.get("content", ""))
        return JSONResponse({"count": len(text) // 4, "max_model_len": 32768})
