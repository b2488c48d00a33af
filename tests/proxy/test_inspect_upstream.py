"""The Inspect-model upstream: harness calls through the proxy become Inspect ModelEvents of the sample."""

import asyncio
import json
from pathlib import Path

import httpx
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import ModelEvent
from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage, get_model
from inspect_ai.solver import Generate, TaskState, solver
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from forge_eval.proxy import (
    InspectUpstream,
    ProxyConfig,
    create_app,
    read_calls,
    serve_in_task,
    serve_in_thread,
)
from forge_eval.proxy.records import RolloutRecord
from tests.proxy._harnesses import TASK, binary, codex_args, isolated_env


def _policy(messages, tools, tool_choice, config) -> ModelOutput:
    """mockllm outputs: a shell call while no tool result is in the conversation, then an answer."""
    if any(isinstance(m, ChatMessageTool) for m in messages):
        output = ModelOutput.from_content("mockllm/model", "Done: created hello.txt.")
    elif tools:
        name = next(t.name for t in tools if t.name in ("exec_command", "exec"))
        argument = "cmd" if name == "exec_command" else "command"
        output = ModelOutput.for_tool_call("mockllm/model", name, {argument: "printf '%s' hi > hello.txt"})
    else:
        output = ModelOutput.from_content("mockllm/model", "OK.")
    output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)  # no tiktoken download
    return output


@solver
def through_proxy(records: Path, run: Path, codex: Path | None):
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        config = ProxyConfig(records_dir=records, secret="s")
        app = create_app(config, InspectUpstream(None))  # None: the model of this sample
        app.state.proxy.rollouts.add(
            RolloutRecord(rollout_id="eval1", mode="eval", sampling={"temperature": 0.3})
        )
        async with serve_in_task(app) as url, httpx.AsyncClient(timeout=30) as client:
            base = f"{url}/r/eval1/0/v1"
            tools = [
                {
                    "type": "function",
                    "function": {
                        "name": "exec",
                        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
                    },
                }
            ]
            messages = [{"role": "user", "content": "create hello.txt containing hi"}]
            first = (
                await client.post(
                    f"{base}/chat/completions", json={"model": "m", "messages": messages, "tools": tools}
                )
            ).json()
            call = first["choices"][0]["message"]["tool_calls"][0]
            messages += [
                first["choices"][0]["message"],
                {"role": "tool", "tool_call_id": call["id"], "content": "(no output)"},
            ]
            streamed = await client.post(
                f"{base}/chat/completions",
                json={"model": "m", "messages": messages, "tools": tools, "stream": True},
            )
            assert streamed.text.endswith("data: [DONE]\n\n")
            if codex is not None:  # a real harness through the proxy into Inspect
                work = run / "work"
                work.mkdir(parents=True)
                env = isolated_env(run, CODEX_HOME=str(run / "home" / ".codex"), KEY="unused")
                (run / "home" / ".codex").mkdir()
                process = await asyncio.create_subprocess_exec(
                    str(codex),
                    *codex_args(base, model="inspect", env_key="KEY", events=False),
                    TASK,
                    cwd=work,
                    env=env,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.DEVNULL,
                    stderr=asyncio.subprocess.PIPE,
                )
                _, err = await asyncio.wait_for(process.communicate(), 90)
                assert process.returncode == 0, err.decode()[-2000:]
                state.metadata["codex_file"] = (work / "hello.txt").read_text()
        return state

    return solve


def _run(tmp_path: Path, codex: Path | None):
    model = get_model("mockllm/model", custom_outputs=_policy)
    task = Task(
        dataset=[Sample(input="unused")],
        solver=through_proxy(tmp_path / "records", tmp_path / "run", codex),
    )
    log = eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none")[0]
    assert log.status == "success", log.error
    sample = log.samples[0]
    events = [e for e in sample.events if isinstance(e, ModelEvent)]
    calls = read_calls(tmp_path / "records", "eval1")
    assert len(events) == len(calls) >= 2
    return sample, events, calls


def test_calls_through_the_proxy_are_inspect_model_events(tmp_path):
    _sample, events, calls = _run(tmp_path, codex=None)
    # the first event is the chat call: the harness's tools reached Inspect, the tool call came back
    assert [t.name for t in events[0].tools] == ["exec"]
    assert events[0].output.message.tool_calls[0].function == "exec"
    assert events[0].config.temperature == 0.3  # the rollout's pinned sampling, not the harness's
    tool_call = calls[0].returned_response["choices"][0]["message"]["tool_calls"][0]
    assert tool_call["id"] == events[0].output.message.tool_calls[0].id
    assert json.loads(tool_call["function"]["arguments"]) == {"command": "printf '%s' hi > hello.txt"}
    assert calls[1].stream and calls[1].returned_response["choices"][0]["message"]["content"] == (
        "Done: created hello.txt."
    )
    assert all(c.endpoint == "inspect:mockllm/model" for c in calls)


def test_real_codex_through_the_proxy_into_inspect(tmp_path):
    codex = binary("codex")  # skips, naming the setup script, when Codex is not installed
    sample, events, calls = _run(tmp_path, codex=codex)
    assert sample.metadata["codex_file"] == "hi"
    codex_calls = [c for c in calls if c.api == "responses"]
    assert len(codex_calls) == 2 and codex_calls[0].harness == "codex"
    assert [t.name for t in events[2].tools][:1] == ["exec_command"]
    assert all(c.endpoint == "inspect:mockllm/model" for c in calls)


class _ContextOverflow(Exception):
    """What the OpenAI SDK raises for a prompt over the server's context (it carries `status_code`)."""

    status_code = 400


def _overflowing(messages, tools, tool_choice, config) -> ModelOutput:
    raise _ContextOverflow("request (8578 tokens) exceeds the available context size (8192 tokens)")


#: A context overflow as providers word it, without OpenAI's `context_length_exceeded` code (for that
#: code Inspect returns a reply cut at the model's length instead of raising).
_OVERFLOW_MESSAGE = "input exceeds the maximum number of tokens"


def _refusing_endpoint(request: Request) -> JSONResponse:
    return JSONResponse({"error": {"message": _OVERFLOW_MESSAGE, "type": "invalid_request_error"}}, 400)


def _crashing(messages, tools, tool_choice, config) -> ModelOutput:
    raise RuntimeError("the provider fell over")


def test_a_provider_client_error_reaches_the_harness_as_that_4xx_not_a_502(tmp_path):
    """Harnesses retry a 5xx (OpenClaw: 8 times) but not a 4xx: an overflowing prompt must stay a 400."""

    async def post(policy) -> httpx.Response:
        app = create_app(
            ProxyConfig(records_dir=tmp_path / policy.__name__, secret="s"),
            InspectUpstream(get_model("mockllm/model", custom_outputs=policy)),
        )
        app.state.proxy.rollouts.add(RolloutRecord(rollout_id="r", mode="eval"))
        async with serve_in_task(app) as url, httpx.AsyncClient(timeout=30) as client:
            body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
            return await client.post(f"{url}/r/r/0/v1/chat/completions", json=body)

    overflow = asyncio.run(post(_overflowing))
    assert overflow.status_code == 400, overflow.text
    assert "exceeds the available context size" in overflow.json()["error"]["message"]
    (call,) = read_calls(tmp_path / "_overflowing", "r")
    assert (call.error_kind, call.http_status) == ("context_length", 400)
    assert [(f.kind, f.http_status) for f in call.upstream_failures] == [("context_length", 400)]
    assert asyncio.run(post(_crashing)).status_code == 502


def test_an_endpoints_4xx_reaches_the_harness_with_the_endpoints_own_message(tmp_path, monkeypatch):
    """Through a real OpenAI-compatible endpoint: Inspect wraps the SDK's error around the request and the
    SDK's text is a Python repr of the error object; the harness gets the endpoint's message itself."""
    endpoint = Starlette(routes=[Route("/v1/chat/completions", _refusing_endpoint, methods=["POST"])])
    monkeypatch.setenv("REFUSING_API_KEY", "unused")
    with serve_in_thread(endpoint) as server:
        model = get_model("openai-api/refusing/m", base_url=f"{server.url}/v1")
        app = create_app(ProxyConfig(records_dir=tmp_path, secret="s"), InspectUpstream(model))
        app.state.proxy.rollouts.add(RolloutRecord(rollout_id="r", mode="eval"))

        async def post() -> httpx.Response:
            async with serve_in_task(app) as url, httpx.AsyncClient(timeout=60) as client:
                body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
                return await client.post(f"{url}/r/r/0/v1/chat/completions", json=body)

        answer = asyncio.run(post())
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["message"] == _OVERFLOW_MESSAGE
    (call,) = read_calls(tmp_path, "r")
    assert call.error_kind == "context_length"
    assert "Request:" in call.upstream_failures[0].message  # the record keeps Inspect's whole text
