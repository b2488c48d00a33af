"""The lenient tool-call parser: the formats small models write, and what must not count as a call."""

import json
from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from forge_eval.models import ParsedToolCall, parse_tool_calls

TOOLS = {"get_weather", "read_file", "bash"}

QWEN_FENCED = '```json\n{\n  "name": "get_weather",\n  "arguments": {\n    "city": "Paris"\n  }\n}\n```'


def test_qwen_fenced_output_parses() -> None:
    result = parse_tool_calls(QWEN_FENCED, TOOLS)
    assert result.status == "parsed"
    assert result.calls == [ParsedToolCall("get_weather", {"city": "Paris"})]
    assert result.content == ""


def test_prose_before_call_is_kept_as_content() -> None:
    text = 'I will look at the file first.\n{"name": "read_file", "parameters": {"path": "a{b}.txt"}}'
    result = parse_tool_calls(text, TOOLS)
    assert result.calls == [ParsedToolCall("read_file", {"path": "a{b}.txt"})]
    assert result.content == "I will look at the file first."


def test_tool_call_tags_and_several_calls() -> None:
    text = (
        '<tool_call>\n{"name": "bash", "arguments": {"cmd": "ls"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "read_file", "arguments": {"path": "x"}}\n</tool_call>'
    )
    result = parse_tool_calls(text, TOOLS)
    assert [c.name for c in result.calls] == ["bash", "read_file"]
    assert result.content == ""


def test_list_of_calls() -> None:
    text = json.dumps(
        [{"name": "bash", "arguments": {}}, {"name": "get_weather", "arguments": {"city": "b"}}]
    )
    assert parse_tool_calls(text, TOOLS).calls == [
        ParsedToolCall("bash", {}),
        ParsedToolCall("get_weather", {"city": "b"}),
    ]


def test_openai_function_wrapper_with_string_arguments() -> None:
    text = json.dumps({"type": "function", "function": {"name": "bash", "arguments": '{"cmd": "pwd"}'}})
    assert parse_tool_calls(text, TOOLS).calls == [ParsedToolCall("bash", {"cmd": "pwd"})]


def test_declared_tool_without_arguments_key() -> None:
    assert parse_tool_calls('{"name": "bash"}', TOOLS).calls == [ParsedToolCall("bash", {})]


def test_undeclared_tool_is_a_failed_attempt_and_stays_in_content() -> None:
    text = '{"name": "rm_rf", "arguments": {"path": "/"}}'
    result = parse_tool_calls(text, TOOLS)
    assert result.status == "failed"
    assert result.calls == []
    assert "rm_rf" in result.errors[0]
    assert result.content == text


def test_truncated_json_is_a_failed_attempt() -> None:
    result = parse_tool_calls('```json\n{"name": "get_weather", "arguments": {"city": "Par', TOOLS)
    assert result.status == "failed"
    assert result.errors


def test_call_cut_off_after_valid_calls_counts_as_rejected() -> None:
    text = '{"name": "bash", "arguments": {"cmd": "ls"}}\n{"name": "bash", "arguments": {"cmd'
    result = parse_tool_calls(text, TOOLS)
    assert result.status == "parsed"
    assert result.calls == [ParsedToolCall("bash", {"cmd": "ls"})]
    assert len(result.errors) == 1 and "cut off" in result.errors[0]


def test_tags_around_valid_calls_are_not_attempts() -> None:
    text = (
        '<tool_call>\n{"name": "bash", "arguments": {}}\n</tool_call>\n'
        '<tool_call>\n{"name": "x", "arguments": {}}'
    )
    result = parse_tool_calls(text, TOOLS)
    assert result.calls == [ParsedToolCall("bash", {})]
    assert result.errors == ["call names undeclared tool 'x'"]


def test_non_object_arguments_are_rejected() -> None:
    result = parse_tool_calls('{"name": "bash", "arguments": ["ls"]}', TOOLS)
    assert result.status == "failed"
    assert "list" in result.errors[0]


def test_valid_call_next_to_a_rejected_one_is_parsed() -> None:
    text = '{"name": "nope", "arguments": {}} then {"name": "bash", "arguments": {"cmd": "ls"}}'
    result = parse_tool_calls(text, TOOLS)
    assert result.status == "parsed"
    assert result.calls == [ParsedToolCall("bash", {"cmd": "ls"})]
    assert len(result.errors) == 1


def test_ordinary_json_and_prose_are_not_calls() -> None:
    for text in (
        "The answer is 42.",
        'Here is the config: {"name": "service", "port": 80}',
        "Use {x} and [1, 2] in the template.",
        '{"name": "bash is a shell"}',
    ):
        result = parse_tool_calls(text, TOOLS)
        assert result.status == "none", text
        assert result.content == text.strip()


def test_schema_keywords_are_dropped_only_when_not_parameters() -> None:
    text = '{"name": "f", "arguments": {"q": 1, "type": "object", "additionalProperties": false}}'
    without_params = parse_tool_calls(text, ["f"])
    assert without_params.calls[0].arguments == {"q": 1, "type": "object", "additionalProperties": False}
    assert without_params.repaired == 0
    repaired = parse_tool_calls(text, ["f"], {"f": {"q"}})
    assert repaired.calls == [ParsedToolCall("f", {"q": 1}, ("type", "additionalProperties"))]
    assert repaired.repaired == 1
    assert parse_tool_calls(text, ["f"], {"f": {"q", "type"}}).calls[0].arguments == {
        "q": 1,
        "type": "object",
    }


def test_no_declared_tools_means_no_calls() -> None:
    assert parse_tool_calls(QWEN_FENCED, set()).status == "failed"
    assert parse_tool_calls(QWEN_FENCED, set()).calls == []


# --- property tests -----------------------------------------------------------------------------

names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_\-]{0,20}", fullmatch=True)
json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
json_values = st.recursive(
    json_scalars | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
arguments = st.dictionaries(st.text(max_size=10), json_values, max_size=5)


def _call(name: str, args: dict[str, Any], key: str = "arguments") -> dict[str, Any]:
    return {"name": name, key: args}


STYLES: dict[str, Callable[[str, dict[str, Any]], str]] = {
    "bare": lambda n, a: json.dumps(_call(n, a)),
    "parameters": lambda n, a: json.dumps(_call(n, a, "parameters")),
    "indented": lambda n, a: json.dumps(_call(n, a), indent=2),
    "json_fence": lambda n, a: f"```json\n{json.dumps(_call(n, a), indent=2)}\n```",
    "plain_fence": lambda n, a: f"```\n{json.dumps(_call(n, a))}\n```",
    "tool_call_tags": lambda n, a: f"<tool_call>\n{json.dumps(_call(n, a))}\n</tool_call>",
    "list": lambda n, a: json.dumps([_call(n, a)]),
    "after_prose": lambda n, a: f"Let me call the tool now.\n\n{json.dumps(_call(n, a))}",
    "function_wrapper": lambda n, a: json.dumps(
        {"type": "function", "function": {"name": n, "arguments": a}}
    ),
}


FORMATS = {"json_fence": "fenced", "plain_fence": "fenced", "tool_call_tags": "tagged"}


@settings(max_examples=60, deadline=None)
@given(name=names, args=arguments, style=st.sampled_from(sorted(STYLES)), others=st.sets(names, max_size=3))
def test_round_trip_every_style(name: str, args: dict[str, Any], style: str, others: set[str]) -> None:
    text = STYLES[style](name, args)
    result = parse_tool_calls(text, others | {name})
    assert result.status == "parsed"
    assert result.calls == [ParsedToolCall(name, args)]
    assert result.errors == []
    assert result.content == ("Let me call the tool now." if style == "after_prose" else "")
    assert result.format == FORMATS.get(style, "bare")


@settings(max_examples=30, deadline=None)
@given(calls=st.lists(st.tuples(names, arguments), min_size=1, max_size=4))
def test_round_trip_several_calls(calls: list[tuple[str, dict[str, Any]]]) -> None:
    declared = {n for n, _ in calls}
    listed = parse_tool_calls(json.dumps([_call(n, a) for n, a in calls]), declared)
    tagged = parse_tool_calls(
        "\n".join(f"<tool_call>{json.dumps(_call(n, a))}</tool_call>" for n, a in calls), declared
    )
    expected = [ParsedToolCall(n, a) for n, a in calls]
    assert listed.calls == expected
    assert tagged.calls == expected


@settings(max_examples=60, deadline=None)
@given(prose=st.text(alphabet=st.characters(blacklist_characters="{[")), declared=st.sets(names, max_size=3))
def test_prose_without_a_call_gives_none(prose: str, declared: set[str]) -> None:
    result = parse_tool_calls(prose, declared)
    assert result.status == "none"
    assert result.calls == []
    assert result.content == prose.strip()


@settings(max_examples=40, deadline=None)
@given(name=names, args=arguments, declared=st.sets(names, max_size=3))
def test_undeclared_names_never_parse(name: str, args: dict[str, Any], declared: set[str]) -> None:
    declared.discard(name)
    result = parse_tool_calls(json.dumps(_call(name, args)), declared)
    assert result.calls == []
    assert result.status == "failed"
