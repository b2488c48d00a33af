"""Property-based tests of the API translators, checked against the official SDKs' own types and stream
accumulators (an independent reading of each API's format)."""

import json
from typing import Any

import anthropic.types as at
from anthropic.lib.streaming._messages import accumulate_event
from hypothesis import given, settings
from hypothesis import strategies as st
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types import Completion
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

from forge_eval.proxy import (
    ADAPTERS,
    BadRequest,
    CanonicalRequest,
    CanonicalResponse,
    ConversationStore,
    ToolCall,
)
from tests.proxy._sse import parse_sse

settings.register_profile("proxy", max_examples=40, deadline=None)
settings.load_profile("proxy")

text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
names = st.from_regex(r"[a-zA-Z][a-zA-Z0-9_]{0,15}", fullmatch=True)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(names, inner, max_size=3),
    max_leaves=8,
)
arguments = st.dictionaries(names, json_values, max_size=4)
call_ids = st.from_regex(r"call_[a-z0-9]{4,12}", fullmatch=True)


@st.composite
def responses(draw: st.DrawFn) -> CanonicalResponse:
    calls = draw(
        st.lists(
            st.builds(lambda i, n, a: ToolCall(i, n, json.dumps(a)), call_ids, names, arguments),
            max_size=3,
            unique_by=lambda c: c.id,
        )
    )
    body = draw(text)
    finish = "tool_calls" if calls else draw(st.sampled_from(["stop", "length"]))
    return CanonicalResponse(
        text=body,
        tool_calls=calls,
        finish_reason=finish,
        prompt_tokens=draw(st.integers(0, 10**6)),
        completion_tokens=draw(st.integers(0, 10**5)),
    )


def request(api: str, include_usage: bool = True, custom: frozenset[str] = frozenset()) -> CanonicalRequest:
    return CanonicalRequest(
        model="policy-alias",
        messages=[{"role": "user", "content": "x"}],
        stream=True,
        include_usage=include_usage,
        custom_tools=custom,
        adapter_state={"response_id": "resp_1"},
    )


def stream(api: str, req: CanonicalRequest, resp: CanonicalResponse) -> list[tuple[str | None, Any]]:
    return parse_sse(b"".join(ADAPTERS.get(api).stream_events(req, resp)))


@given(responses(), st.booleans())
def test_chat_json_and_stream_carry_the_same_turn(resp: CanonicalResponse, include_usage: bool) -> None:
    req = request("chat", include_usage)
    rendered = ChatCompletion.model_validate(ADAPTERS.get("chat").render(req, resp))
    events = stream("chat", req, resp)
    assert events[-1] == (None, "[DONE]")
    state = ChatCompletionStreamState()
    for _, data in events[:-1]:
        state.handle_chunk(ChatCompletionChunk.model_validate(data))
    streamed = state.current_completion_snapshot
    for completion in (rendered, streamed):
        message = completion.choices[0].message
        assert (message.content or "") == resp.text
        assert [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or []] == [
            (c.id, c.name, c.arguments) for c in resp.tool_calls
        ]
        assert completion.choices[0].finish_reason == resp.finish_reason
    usage = [data["usage"] for _, data in events[:-1] if data.get("usage")]
    assert usage == ([resp.usage] if include_usage else [])


@given(responses())
def test_anthropic_json_and_stream_carry_the_same_turn(resp: CanonicalResponse) -> None:
    req = request("anthropic_messages")
    rendered = at.Message.model_validate(ADAPTERS.get("anthropic_messages").render(req, resp))
    events = stream("anthropic_messages", req, resp)
    assert [name for name, _ in events] == [data["type"] for _, data in events]
    assert events[0][0] == "message_start" and events[-1][0] == "message_stop"
    snapshot, bufs = None, {}
    event_type = TypeAdapter(at.RawMessageStreamEvent)
    for _, data in events:
        snapshot = accumulate_event(
            event=event_type.validate_python(data), current_snapshot=snapshot, json_bufs=bufs
        )
    for message in (rendered, snapshot):
        texts = [b.text for b in message.content if b.type == "text"]
        assert "".join(texts) == resp.text
        uses = [(b.id, b.name, b.input) for b in message.content if b.type == "tool_use"]
        assert uses == [(c.id, c.name, json.loads(c.arguments)) for c in resp.tool_calls]
        expected = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}[resp.finish_reason]
        assert message.stop_reason == expected
    assert snapshot.usage.output_tokens == resp.completion_tokens


@given(responses(), st.sets(names, max_size=2))
def test_responses_json_and_stream_carry_the_same_turn(resp: CanonicalResponse, custom: set[str]) -> None:
    custom_names = frozenset(custom | ({resp.tool_calls[0].name} if resp.tool_calls else set()))
    for call in resp.tool_calls:
        if call.name in custom_names:
            call.arguments = json.dumps({"input": call.name + "\n*** patch"})
    req = request("responses", custom=custom_names)
    rendered = Response.model_validate(ADAPTERS.get("responses").render(req, resp))
    events = stream("responses", req, resp)
    event_type = TypeAdapter(ResponseStreamEvent)
    parsed = [event_type.validate_python(data) for _, data in events]
    assert [e.sequence_number for e in parsed] == list(range(len(parsed)))
    assert parsed[0].type == "response.created" and parsed[-1].type == "response.completed"
    final = parsed[-1].response
    for response in (rendered, final):
        assert response.id == "resp_1"
        assert response.output_text == resp.text
        calls = [o for o in response.output if o.type in ("function_call", "custom_tool_call")]
        assert [c.call_id for c in calls] == [c.id for c in resp.tool_calls]
        for item, call in zip(calls, resp.tool_calls, strict=True):
            if call.name in custom_names:
                assert item.type == "custom_tool_call" and item.input == json.loads(call.arguments)["input"]
            else:
                assert item.type == "function_call" and item.arguments == call.arguments
    assert final.usage.output_tokens == resp.completion_tokens
    done = [e.item for e in parsed if e.type == "response.output_item.done"]
    assert [d.model_dump() for d in done] == [o.model_dump() for o in final.output]


@given(text, st.sampled_from(["stop", "length"]), st.booleans())
def test_completions_json_and_stream(body: str, finish: str, include_usage: bool) -> None:
    resp = CanonicalResponse(text=body, finish_reason=finish, prompt_tokens=3, completion_tokens=5)
    req = CanonicalRequest(model="m", messages=[], prompt="p", include_usage=include_usage)
    rendered = Completion.model_validate(ADAPTERS.get("completions").render(req, resp))
    events = stream("completions", req, resp)
    assert rendered.choices[0].text == body
    assert "".join(d["choices"][0]["text"] for _, d in events[:-1] if d["choices"]) == body
    assert [d["choices"][0]["finish_reason"] for _, d in events[:-1] if d["choices"]][-1] == finish
    assert any("usage" in d for _, d in events[:-1]) == include_usage


@st.composite
def anthropic_conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    """User/assistant turns where every tool_use is answered by a tool_result in the next user turn."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": draw(text) or "start"}]
    for turn in range(draw(st.integers(0, 4))):
        uses = [
            {"type": "tool_use", "id": f"toolu_{turn}_{i}", "name": draw(names), "input": draw(arguments)}
            for i in range(draw(st.integers(0, 2)))
        ]
        said = draw(text)
        content = ([{"type": "text", "text": said}] if said else []) + uses
        messages.append({"role": "assistant", "content": content or "ok"})
        results = [{"type": "tool_result", "tool_use_id": u["id"], "content": draw(text)} for u in uses]
        extra = draw(text)
        user = results + ([{"type": "text", "text": extra}] if extra or not results else [])
        if not user:
            user = [{"type": "text", "text": "next"}]
        messages.append({"role": "user", "content": user})
    return messages


@given(
    anthropic_conversations(),
    st.one_of(st.none(), text, st.lists(text.map(lambda t: {"type": "text", "text": t}))),
)
def test_anthropic_requests_keep_every_tool_exchange(messages: list[dict[str, Any]], system: Any) -> None:
    body = {
        "model": "claude-x",
        "max_tokens": 64,
        "messages": messages,
        **({"system": system} if system else {}),
    }
    chat = ADAPTERS.get("anthropic_messages").parse(body, ConversationStore()).messages
    uses = [
        b
        for m in messages
        if m["role"] == "assistant" and isinstance(m["content"], list)
        for b in m["content"]
        if b["type"] == "tool_use"
    ]
    calls = [c for m in chat if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    assert [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == [
        (u["id"], u["name"], u["input"]) for u in uses
    ]
    # each tool message answers a call made earlier, in order
    seen: list[str] = []
    answered: list[str] = []
    for m in chat:
        seen += [c["id"] for c in m.get("tool_calls", [])]
        if m["role"] == "tool":
            assert m["tool_call_id"] in seen
            answered.append(m["tool_call_id"])
    assert answered == [u["id"] for u in uses]
    assert sum(m["role"] == "system" for m in chat) == (1 if system and body.get("system") else 0)


@st.composite
def responses_inputs(draw: st.DrawFn) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [
        {"role": "developer", "content": draw(text)},
        {"role": "user", "content": [{"type": "input_text", "text": draw(text)}]},
    ]
    for turn in range(draw(st.integers(0, 3))):
        for i in range(draw(st.integers(1, 2))):
            call_id = f"call_{turn}_{i}"
            if draw(st.booleans()):
                items.append(
                    {
                        "type": "function_call",
                        "call_id": call_id,
                        "name": draw(names),
                        "arguments": json.dumps(draw(arguments)),
                    }
                )
                items.append({"type": "function_call_output", "call_id": call_id, "output": draw(text)})
            else:
                items.append(
                    {
                        "type": "custom_tool_call",
                        "call_id": call_id,
                        "name": "apply_patch",
                        "input": draw(text),
                    }
                )
                items.append({"type": "custom_tool_call_output", "call_id": call_id, "output": draw(text)})
    return items


@given(responses_inputs())
def test_responses_input_items_become_chat_messages(items: list[dict[str, Any]]) -> None:
    body = {
        "model": "gpt-x",
        "input": items,
        "tools": [{"type": "custom", "name": "apply_patch", "description": "patch"}],
    }
    parsed = ADAPTERS.get("responses").parse(body, ConversationStore())
    chat = parsed.messages
    assert chat[0]["role"] == "system"  # developer -> system
    calls = {c["id"]: c for m in chat if m["role"] == "assistant" for c in m["tool_calls"]}
    outputs = {m["tool_call_id"]: m["content"] for m in chat if m["role"] == "tool"}
    for item in items:
        if item.get("type") in ("function_call", "custom_tool_call"):
            function = calls[item["call_id"]]["function"]
            assert function["name"] == item["name"]
            expected = (
                item["arguments"] if item["type"] == "function_call" else json.dumps({"input": item["input"]})
            )
            assert json.loads(function["arguments"]) == json.loads(expected)
        if item.get("type", "").endswith("_output"):
            assert outputs[item["call_id"]] == item["output"]
    assert parsed.custom_tools == {"apply_patch"}
    assert parsed.tools[0]["function"]["parameters"]["required"] == ["input"]


def test_previous_response_id_continues_the_stored_conversation() -> None:
    adapter, store = ADAPTERS.get("responses"), ConversationStore()
    first = adapter.parse({"model": "m", "instructions": "be brief", "input": "hi"}, store)
    adapter.remember(first, CanonicalResponse(text="hello"), store)
    second = adapter.parse(
        {
            "model": "m",
            "previous_response_id": first.adapter_state["response_id"],
            "input": [{"role": "user", "content": "again"}],
        },
        store,
    )
    # instructions are per response; the stored turns are carried
    assert [m["role"] for m in second.messages] == ["user", "assistant", "user"]
    assert second.messages[1]["content"] == "hello"
    try:
        adapter.parse({"model": "m", "previous_response_id": "resp_missing", "input": "x"}, store)
    except BadRequest as e:
        assert e.status == 400 and e.code == "previous_response_not_found"
    else:
        raise AssertionError("an unknown previous_response_id was accepted")


sampling_values = st.floats(0, 2, allow_nan=False)


@given(
    st.dictionaries(
        st.sampled_from(["temperature", "top_p", "top_k", "seed", "presence_penalty"]), sampling_values
    ),
    st.dictionaries(st.sampled_from(["temperature", "top_p", "min_p", "max_tokens"]), st.integers(1, 4096)),
    st.one_of(st.none(), st.integers(1, 8192)),
)
def test_served_body_pins_win_over_the_clients_sampling(
    client: dict, pinned: dict, max_tokens: int | None
) -> None:
    body = {"model": "alias", "messages": [{"role": "user", "content": "x"}], **client}
    if max_tokens:
        body["max_tokens"] = max_tokens
    req = ADAPTERS.get("chat").parse(body, ConversationStore())
    served = req.body("served-model", pinned)
    assert req.client_sampling == client
    assert served["model"] == "served-model" and served["n"] == 1 and served["stream"] is False
    for key in ("temperature", "top_p", "top_k", "seed", "presence_penalty", "min_p"):
        assert served.get(key) == (pinned[key] if key in pinned else client.get(key))
    caps = [v for v in (max_tokens, pinned.get("max_tokens")) if v]
    assert served.get("max_tokens") == (min(caps) if caps else None)


def test_leading_system_messages_are_served_as_one():
    body = {
        "model": "m",
        "input": [
            {"role": "developer", "content": "base"},
            {"role": "developer", "content": "skills"},
            {"role": "user", "content": "task"},
            {"role": "developer", "content": "late"},
        ],
    }
    served = ADAPTERS.get("responses").parse(body, ConversationStore()).body("x", {})
    assert served["messages"] == [
        {"role": "system", "content": "base\n\nskills"},
        {"role": "user", "content": "task"},
        {"role": "system", "content": "late"},
    ]
