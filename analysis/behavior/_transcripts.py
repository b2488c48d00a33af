"""Read Inspect logs into tidy behavior tables: one row per tool call, one row per rollout.

Tool calls are taken from `ModelEvent` outputs for every harness: native agents (react) also log a
`ToolEvent` per call, but bridged harnesses (Codex, Claude Code, OpenClaw) run their tools themselves,
so their calls exist only in model outputs and their results only in the next model input (as tool
messages). A call's result is looked up by call id in ToolEvents first, then in later model inputs and
the final messages; ids are compared without punctuation and allowing truncation, because OpenClaw
rewrites them (`call_2f…` -> `call2f…`, at most 40 characters).

A result failed when its error field says so (a ToolEvent's or tool message's `error`, or the metadata
`is_error` the proxy sets where the harness marked it: Claude Code's `tool_result.is_error`), when a
non-shell tool's whole result is the harness's own failure report (`HarnessRules.tool_error`, for wire
APIs without an error field), or, for the shell, by the exit status read where the harness writes it.
An exit status that answers a question (`grep -q` exiting 1: no match) is `answer_exit`, not a failure.

Logs are read one at a time, each whole with `read_eval_log` (linear in samples once the garbage
collector is paused); `read_eval_log_samples` re-opens the zip per sample and is super-linear
(measured with Inspect 0.3.285: 63 s for 3000 samples).
"""

import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from inspect_ai.event import ModelEvent, ToolEvent
from inspect_ai.log import EvalLog, EvalLogInfo, EvalSample, list_eval_logs, read_eval_log
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ContentText
from inspect_ai.scorer import value_to_float
from inspect_ai.tool import ToolCall, ToolCallError

from forge_eval._errors import ForgeError
from forge_eval.analysis._trials import is_agent_turn, log_seed
from forge_eval.analysis.behavior._access import access_kind
from forge_eval.analysis.behavior._gc import gc_paused
from forge_eval.analysis.behavior._records import RolloutKey, parse_failed, read_parse_verdicts
from forge_eval.analysis.behavior._rules import CallAccess, HarnessRules, rules_for
from forge_eval.analysis.behavior._services import service_access, service_tool
from forge_eval.analysis.behavior._shell import answer_exit
from forge_eval.proxy.records import TOOL_ERROR_KEY
from forge_eval.rundir import RunDir, ToolSpec, read_tool_specs, read_trials

CALL_COLUMNS = [
    "task_id", "seed", "epoch", "harness", "call_index", "turn", "tool", "arguments", "result",
    "failed", "error_kind", "access", "accesses", "reads", "writes", "service", "generic_shell", "verifies",
]  # fmt: skip
ROLLOUT_COLUMNS = [
    "task_id", "seed", "epoch", "harness", "passed", "score", "n_calls", "n_turns", "ended_malformed",
    "records", "services", "required_tools", "plan", "category", "difficulty", "harness_named",
]  # fmt: skip

# A turn whose text *is* a tool-call payload that did not parse into a call (it starts with one, after an
# optional code fence): Hermes/Qwen `<tool_call>`, Llama `<function=`, Mistral `[TOOL_CALLS]`, bare JSON
# {"name", "arguments"}. An answer that quotes such a payload in its prose is an answer.
_TOOL_CALL_TEXT = re.compile(
    r"\A\s*(?:```\w*\s*)?(?:<tool_call>|<function[=>]|\[TOOL_CALLS\]|<\|tool_call"
    r"|\{\s*\"(?:name|function)\"\s*:\s*\"[\w.-]+\"\s*,\s*\"(?:arguments|parameters|args)\"\s*:)"
)
#: error_kind values that are not failures: "" (it worked) and an exit status that is an answer
NOT_FAILED = frozenset({"", "answer_exit"})
_MCP_PREFIX = re.compile(r"^mcp__.+?__")
_ATTACHMENT = "attachment://"
_to_float = value_to_float()


@dataclass(frozen=True)
class Transcripts:
    """The behavior tables of one run.

    Attributes:
        calls: One row per tool call (`CALL_COLUMNS`), in call order within each rollout; a model turn
            with a malformed tool-call payload is a row with `error_kind="malformed"`.
        rollouts: One row per (task_id, seed, epoch) (`ROLLOUT_COLUMNS`), with task metadata.
    """

    calls: pd.DataFrame
    rollouts: pd.DataFrame


def tool_name(function: str) -> str:
    """The tool's own name: MCP-bridged tools (`mcp__forgelab__issues_get`) lose their server prefix."""
    return _MCP_PREFIX.sub("", function)


def _id_key(call_id: str | None) -> str:
    return re.sub(r"[^A-Za-z0-9]", "", call_id or "")


class _Attachments:
    """A sample's attachments: Inspect logs each long string once, as an `attachment://<hash>` reference.

    Only the strings the analysis reads (tool results, call arguments, assistant text) are resolved;
    resolving a whole log (`resolve_attachments=True`) would copy every model input too.
    """

    def __init__(self, table: dict[str, str]) -> None:
        self.table = table

    def resolve(self, value: Any) -> Any:
        if isinstance(value, str):
            if value.startswith(_ATTACHMENT):
                return self.table.get(value[len(_ATTACHMENT) :], value)
            return value
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if isinstance(value, dict):
            return {k: self.resolve(v) for k, v in value.items()}
        return value

    def text(self, value: Any) -> str:
        """The text of a message content or tool result: strings and text parts, resolved."""
        if isinstance(value, str):
            return self.resolve(value)
        if isinstance(value, ContentText):
            return self.resolve(value.text)
        if isinstance(value, list):
            return "\n".join(t for t in (self.text(v) for v in value) if t)
        if isinstance(value, int | float):
            return str(value)
        return ""


def _malformed(event: ModelEvent, message: ChatMessageAssistant, attachments: _Attachments) -> bool:
    """Whether a turn is a tool-call parse failure.

    Signs: the embedded server's marker in the raw response (logged for the first calls, or all with
    `log_model_api=True`), Inspect's own `parse_error`, or a tool call left as text.
    """
    if event.call is not None and parse_failed(event.call.response):
        return True
    if any(c.parse_error for c in message.tool_calls or []):
        return True
    return not message.tool_calls and bool(_TOOL_CALL_TEXT.search(attachments.text(message.content)))


@dataclass(frozen=True)
class ToolCallAccess:
    """A call's classification: its accesses, the service it belongs to, whether it is the shell."""

    access: CallAccess
    service: str | None
    generic_shell: bool


@dataclass(frozen=True)
class _Result:
    text: str
    error: ToolCallError | None


def _results(sample: EvalSample, attachments: _Attachments) -> dict[str, _Result]:
    """Call id (punctuation stripped) -> result, from ToolEvents, later model inputs and the messages."""
    found: dict[str, _Result] = {}

    def add_messages(messages: Iterable[Any]) -> None:
        for message in messages:
            if isinstance(message, ChatMessageTool):
                text = attachments.text(message.content)
                marked = (message.metadata or {}).get(TOOL_ERROR_KEY) is True
                error = message.error or (ToolCallError("unknown", text) if marked else None)
                result = _Result(text, error)
                found.setdefault(_id_key(message.tool_call_id), result)

    for event in sample.events:
        if isinstance(event, ToolEvent):
            found[_id_key(event.id)] = _Result(attachments.text(event.result), event.error)
        elif isinstance(event, ModelEvent):
            # the previous turn's results follow the last assistant message: scan back only that far
            tail = []
            for message in reversed(event.input):
                if isinstance(message, ChatMessageAssistant):
                    break
                tail.append(message)
            add_messages(tail)
    add_messages(sample.messages)
    return found


def _find_result(results: dict[str, _Result], call_id: str) -> _Result | None:
    """The result of a call: by id, else by an id the harness shortened (OpenClaw keeps 40 characters)."""
    key = _id_key(call_id)
    found = results.get(key)
    if found is None and len(key) > 8:
        found = next((r for k, r in results.items() if len(k) > 8 and key.startswith(k)), None)
    return found


_TIMEOUT_EXIT = 124  # the status GNU `timeout` (and harnesses following it) give a killed command


def _error_kind(
    result: _Result | None,
    call: ToolCall,
    arguments: Mapping[str, Any],
    access: ToolCallAccess,
    rules: HarnessRules,
) -> str:
    """How the call failed: "malformed", "timeout", "nonzero_exit", "tool_error", "" (it did not), or
    "answer_exit" (a non-zero exit status that is the command's answer, not a failure).

    Result text is trusted only where the harness writes it: the shell's exit status at its place in the
    result (`HarnessRules.exit_code`), without one a timeout message, and a non-shell tool's failure report
    that is the whole result (`HarnessRules.tool_error`). Other text is data (a log that says `exit
    status: 2`, a file that mentions "timed out"), so otherwise only the error field counts.
    """
    if call.parse_error or (result and result.error and result.error.type == "parsing"):
        return "malformed"
    if result is None:
        return ""
    if result.error and result.error.type == "timeout":
        return "timeout"
    if access.generic_shell:
        found = rules.exit_code.search(result.text)
        code = int(found.group(1)) if found else None
        if code == _TIMEOUT_EXIT:
            return "timeout"
        rule = rules.tools.get(tool_name(call.function))
        command = rule.command(arguments) if rule and rule.command else ""
        if code and answer_exit(command, code, rules.shell_commands):
            return "answer_exit"
        if code:
            return "nonzero_exit"
        if code is None and rules.timeout.search(result.text):
            return "timeout"
    elif rules.tool_error is not None and rules.tool_error.search(result.text):
        return "tool_error"
    return "tool_error" if result.error else ""


def classify_call(
    tool: str,
    arguments: Mapping[str, Any],
    rules: HarnessRules,
    services: Iterable[str] = (),
    specs: Mapping[str, ToolSpec] | None = None,
    result: str | None = None,
) -> ToolCallAccess:
    """Classify one call by the harness's table, else as a service tool, else as "other".

    `result` is the call's result text: a creation's result names the object it created.
    """
    rule = rules.tools.get(tool)
    if rule is not None:
        return ToolCallAccess(rule.classify(arguments, rules), None, rule.generic_shell)
    spec = service_tool(tool, services, specs or {})
    if spec is not None:
        return ToolCallAccess(service_access(spec, arguments, result), spec.service, False)
    return ToolCallAccess(CallAccess(frozenset(), ()), None, False)


def _call_row(
    key: dict[str, Any],
    index: int,
    turn: int,
    call: ToolCall | None,
    arguments: dict[str, Any],
    result: _Result | None,
    classified: ToolCallAccess,
    error_kind: str,
) -> dict[str, Any]:
    accesses = tuple((a.op, a.resource) for a in classified.access.accesses)
    return {
        **key,
        "call_index": index,
        "turn": turn,
        "tool": tool_name(call.function) if call else "",
        "arguments": arguments,
        "result": result.text if result else None,
        "failed": error_kind not in NOT_FAILED,
        "error_kind": error_kind,
        "access": access_kind(set(classified.access.ops)),
        "accesses": accesses,
        "reads": tuple(r for op, r in accesses if op == "read"),
        "writes": tuple(r for op, r in accesses if op == "write"),
        "service": classified.service,
        "generic_shell": classified.generic_shell,
        "verifies": classified.access.verifies,
    }


_NO_ACCESS = ToolCallAccess(CallAccess(frozenset(), ()), None, False)


@dataclass(frozen=True)
class SampleCalls:
    """One sample's call rows and what the rollout table needs to know about its turns.

    Attributes:
        rows: Call rows (`CALL_COLUMNS`), in order.
        turns: Agent model turns.
        ended_malformed: The last agent turn was a malformed tool-call payload.
        records: "matched" when proxy records gave a parse verdict per turn, "mismatched" when their
            count differs from the turns (they are then not used), "" without records.
    """

    rows: list[dict[str, Any]]
    turns: int
    ended_malformed: bool
    records: str


def sample_calls(
    sample: EvalSample,
    key: dict[str, Any],
    rules: HarnessRules,
    specs: Mapping[str, ToolSpec] | None = None,
    parse_verdicts: list[bool] | None = None,
) -> SampleCalls:
    """The call rows of one sample.

    Args:
        sample: The Inspect sample.
        key: Columns every row carries (task_id, seed, epoch, harness).
        rules: The harness's tool rules.
        specs: Service tool descriptions, over those the sample's metadata records.
        parse_verdicts: Per agent turn, whether the proxy's record of it carries a tool-call parse
            failure; used when there is exactly one per turn.
    """
    services = list((sample.metadata or {}).get("services") or [])
    specs = {**read_tool_specs(sample.metadata), **(specs or {})}
    attachments = _Attachments(sample.attachments)
    results = _results(sample, attachments)
    events = [e for e in sample.events if is_agent_turn(e)]
    records = ""
    verdicts = [False] * len(events)
    if parse_verdicts is not None:
        records = "matched" if len(parse_verdicts) == len(events) else "mismatched"
        verdicts = parse_verdicts if records == "matched" else verdicts
    rows: list[dict[str, Any]] = []
    last_malformed = False
    for turn, event in enumerate(events, start=1):
        message = event.output.message
        last_malformed = _malformed(event, message, attachments) or verdicts[turn - 1]
        if last_malformed and not any(c.parse_error for c in message.tool_calls or []):
            rows.append(_call_row(key, len(rows), turn, None, {}, None, _NO_ACCESS, "malformed"))
        for call in message.tool_calls or []:
            tool = tool_name(call.function)
            arguments = attachments.resolve(dict(call.arguments or {}))
            result = _find_result(results, call.id)
            text = result.text if result else None
            classified = classify_call(tool, arguments, rules, services, specs, text)
            kind = _error_kind(result, call, arguments, classified, rules)
            rows.append(_call_row(key, len(rows), turn, call, arguments, result, classified, kind))
    return SampleCalls(rows, len(events), last_malformed, records)


def _harness(log: EvalLog, default: str | None) -> tuple[str, bool]:
    """(the harness, whether the run names it): a log that names none (a plain Inspect run) is read with
    react's rules, but nothing says how its shell tool reports a failed command."""
    named = default or log.eval.task_args.get("harness") or (log.eval.metadata or {}).get("harness")
    return str(named or "react"), bool(named)


def _score(sample: EvalSample) -> float:
    if sample.error or not sample.scores:
        return math.nan
    return _to_float(next(iter(sample.scores.values())).value)


def _logs_oldest_first(logs: Iterable[str | Path | EvalLogInfo | EvalLog]) -> Iterator[EvalLog]:
    """Logs in creation order, each read whole only when its turn comes (one log in memory at a time)."""
    headers = []
    for log in logs:
        if isinstance(log, EvalLog):
            headers.append((log.eval.created, log))
        else:
            location = log if isinstance(log, EvalLogInfo) else str(log)
            headers.append((read_eval_log(location, header_only=True).eval.created, location))
    for _, log in sorted(headers, key=lambda pair: pair[0]):
        yield log if isinstance(log, EvalLog) else read_eval_log(log)


def _rollout_row(
    sample: EvalSample, key: dict[str, Any], found: SampleCalls, solved: bool | None, threshold: float
) -> dict[str, Any]:
    score = _score(sample)
    metadata = sample.metadata or {}
    required_tools = metadata.get("required_tools")
    return {
        **key,
        "passed": bool(solved) if solved is not None else bool(score >= threshold),
        "score": score,
        "n_calls": sum(1 for r in found.rows if r["tool"]),
        "n_turns": found.turns,
        "ended_malformed": found.ended_malformed,
        "records": found.records,
        "services": list(metadata.get("services") or []),
        # None (not []) when the task does not say: coverage then falls back to services
        "required_tools": None if required_tools is None else list(required_tools),
        "plan": list(metadata.get("plan") or []),
        "category": metadata.get("category"),
        "difficulty": metadata.get("difficulty"),
    }


def read_transcripts(
    logs: Iterable[str | Path | EvalLogInfo | EvalLog],
    *,
    harness: str | None = None,
    passed: Mapping[tuple[str, int, int], bool] | None = None,
    threshold: float = 1.0,
    specs: Mapping[str, ToolSpec] | None = None,
    records: Mapping[RolloutKey, list[bool]] | None = None,
) -> Transcripts:
    """Read eval logs (paths or loaded logs) into the per-call and per-rollout tables.

    Args:
        logs: The run's logs (one per seed); a later log's sample replaces an earlier one's.
        harness: The harness that produced them (else the log's task args, else "react").
        passed: (task_id, seed, epoch) -> solved, e.g. from the run's trials.csv; otherwise a rollout
            passes when its first score is >= `threshold`.
        threshold: Pass threshold on the first score, used without `passed`.
        specs: Service tool descriptions (tool name -> ToolSpec), over those each sample's metadata
            records (`forge_eval.rundir.TOOL_SPECS_KEY`, written by the benchmark).
        records: The proxy's per-turn parse verdicts of the run (`read_parse_verdicts`), if recorded.

    Returns:
        The run's Transcripts.
    """
    calls: dict[tuple[str, int, int], list[dict[str, Any]]] = {}
    rollouts: dict[tuple[str, int, int], dict[str, Any]] = {}
    with gc_paused():
        for log in _logs_oldest_first(logs):
            seed = log_seed(log)
            name, named = _harness(log, harness)
            rules = rules_for(name)
            for sample in log.samples or []:
                key = {"task_id": str(sample.id), "seed": seed, "epoch": int(sample.epoch), "harness": name}
                ident = (key["task_id"], seed, key["epoch"])
                found = sample_calls(sample, key, rules, specs, (records or {}).get(ident))
                solved = passed.get(ident) if passed is not None else None
                calls[ident] = found.rows
                row = _rollout_row(sample, key, found, solved, threshold)
                rollouts[ident] = row | {"harness_named": named}
    call_table = pd.DataFrame([r for ident in sorted(calls) for r in calls[ident]], columns=CALL_COLUMNS)
    rollout_table = pd.DataFrame([rollouts[i] for i in sorted(rollouts)], columns=ROLLOUT_COLUMNS)
    return Transcripts(call_table, rollout_table)


def _passed_from_trials(path: Path) -> dict[tuple[str, int, int], bool]:
    trials = read_trials(path)
    return {(str(t.task_id), int(t.seed), int(t.epoch)): bool(t.passed) for t in trials.itertuples()}


def read_run_transcripts(run_dir: str | Path) -> Transcripts:
    """Read a run directory (`forge-eval run --out DIR`): its logs, harness and per-trial outcomes.

    The proxy's call records are used when the run has them (`records/` beside the logs). The logs are
    where results.json's `log_dir` says: a harness matrix's directory reads as its first harness's run.

    Raises:
        ForgeError: The directory has no logs.
    """
    files = RunDir(run_dir)
    results = files.read_json(RunDir.RESULTS) or {}
    log_dir = files.path / results.get("log_dir", RunDir.LOGS)
    infos = list_eval_logs(str(log_dir)) if log_dir.is_dir() else []
    if not infos:
        raise ForgeError(
            f"no Inspect logs in {log_dir}",
            hint="pass the directory given to `forge-eval run --out` (it holds logs/ and results.json)",
        )
    harness = results.get("harness")
    trials = files.trials
    passed = _passed_from_trials(trials) if trials.is_file() else None
    records_dir = log_dir.parent / RunDir.RECORDS
    records = read_parse_verdicts(records_dir) if records_dir.is_dir() else None
    return read_transcripts(infos, harness=harness, passed=passed, records=records)
