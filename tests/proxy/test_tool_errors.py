"""A tool failure the harness marks (Anthropic's `tool_result.is_error`) survives the proxy: it is on the
tool message of the request served (so in the call record) and in the transcript an Inspect upstream
writes, as message metadata that no provider sends to the model."""

import asyncio

from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage, get_model

from forge_eval.proxy import ADAPTERS, ConversationStore, InspectUpstream

BODY = {
    "model": "m",
    "max_tokens": 64,
    "messages": [
        {"role": "user", "content": "read two files"},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/w/a"}},
                {"type": "tool_use", "id": "t2", "name": "Read", "input": {"file_path": "/w/b"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "No such file.", "is_error": True},
                {"type": "tool_result", "tool_use_id": "t2", "content": "b's text"},
            ],
        },
    ],
}


def test_anthropic_is_error_is_kept_on_the_served_tool_message() -> None:
    request = ADAPTERS.get("anthropic_messages").parse(BODY, ConversationStore())
    tools = [m for m in request.body("served", {})["messages"] if m["role"] == "tool"]
    assert [(m["tool_call_id"], m.get("is_error")) for m in tools] == [("t1", True), ("t2", None)]


def test_the_inspect_transcript_marks_the_failed_result_without_changing_the_prompt() -> None:
    seen = []

    def policy(messages, tools, tool_choice, config) -> ModelOutput:
        seen.extend(m for m in messages if isinstance(m, ChatMessageTool))
        output = ModelOutput.from_content("mockllm/model", "ok")
        output.usage = ModelUsage(input_tokens=10, output_tokens=1, total_tokens=11)  # no tokenizer download
        return output

    request = ADAPTERS.get("anthropic_messages").parse(BODY, ConversationStore())
    upstream = InspectUpstream(get_model("mockllm/model", custom_outputs=policy))
    asyncio.run(upstream.complete(request, {}, route_key="r", call_seq=0))
    marks = [(m.tool_call_id, (m.metadata or {}).get("is_error")) for m in seen]
    assert marks == [("t1", True), ("t2", None)]
    assert all(m.error is None for m in seen) and seen[0].text == "No such file."
