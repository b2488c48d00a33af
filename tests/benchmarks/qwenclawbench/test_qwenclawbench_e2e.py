"""One QwenClawBench task end to end through the real OpenClaw CLI in the bubblewrap sandbox.

The policy is scripted (served as an OpenAI-compatible model behind the per-sample proxy) and so is
the judge (Inspect's mockllm as the "judge" role): no model can run fast enough here for a real one.
Everything else is real: upstream's openclaw.json from the pinned tree, the task's files staged into
OpenClaw's workspace, OpenClaw's own `exec` tool editing them, its session log and the workspace handed
back, upstream's `grade_task` (the task's `grade()`, its judge prompt and hybrid score) on them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import resolve_sample_attachments
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from starlette.responses import JSONResponse

from forge_eval.benchmarks.qwenclawbench import qwenclawbench
from forge_eval.harnesses import harness_settings
from forge_eval.proxy import ScriptedPolicy, ScriptedUpstream, read_calls, serve_in_thread
from forge_eval.proxy._scripted import _tool_turn

#: Its grade() only reads the workspace: the subagent limits in .openclaw/openclaw.json and SKILL.md.
TASK_ID = "task_00010_openclaw_subtask_isolation_configuration_skill"
EDIT = """python3 - <<'PY'
import json, re
p = ".openclaw/openclaw.json"
c = json.loads(re.sub(r"//[^\\n]*", "", open(p).read()))
c["agents"]["defaults"]["subagents"] = {"maxConcurrent": 2, "maxSpawnDepth": 1, "runTimeoutSeconds": 300}
c.setdefault("tools", {})["subagents"] = {"tools": {"deny": ["gateway", "cron"]}}
json.dump(c, open(p, "w"), indent=2)
open("SKILL.md", "w").write("---\\nname: subagent-limits\\n---\\nagents.defaults.subagents: "
                            "maxConcurrent, maxSpawnDepth, runTimeoutSeconds\\n")
print("CONFIG-UPDATED")
PY"""
JUDGE_TOTAL = 0.5

pytestmark = [
    pytest.mark.harness,
    pytest.mark.slow,
]


@dataclass
class EditPolicy(ScriptedPolicy):
    """Runs `EDIT` with OpenClaw's shell tool, then answers with what it printed."""

    def respond(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body.get("messages", [])
        if any(m.get("role") == "tool" for m in messages):
            answer = {"role": "assistant", "content": "Subagent limits set."}
            return {"message": answer, "finish_reason": "stop"}
        call = self.shell_call(body.get("tools") or [], EDIT)
        if call is None:
            return {"message": {"role": "assistant", "content": "no shell tool"}, "finish_reason": "stop"}
        return _tool_turn(messages, *call)


@pytest.fixture
def scripted_policy(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with serve_in_thread(ScriptedUpstream(policy=EditPolicy()).app()) as server:
        monkeypatch.setenv("SCRIPTED_API_KEY", "unused")
        yield server.url


def _run_openclaw(upstream_trees: Path, task_id: str, policy_url: str, tmp_path: Path) -> Any:
    """One task through OpenClaw in the sandbox, with the scripted policy at `policy_url` and a mockllm
    judge answering `JUDGE_TOTAL`; the finished sample, attachments resolved."""
    tree = upstream_trees / "SKYLENAGE-AI+QwenClawBench@e4eefcf"
    verdict = json.dumps({"scores": {"accuracy": JUDGE_TOTAL}, "total": JUDGE_TOTAL, "notes": "scripted"})
    output = ModelOutput.from_content("mockllm/model", verdict)
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tiktoken download
    judge = get_model("mockllm/model", custom_outputs=[output])
    with harness_settings(records_dir=tmp_path / "records", sandbox=True):
        [log] = inspect_eval(
            qwenclawbench(harness="openclaw", task_ids=task_id, data_dir=str(tree)),
            model="openai-api/scripted/scripted-policy",
            model_base_url=f"{policy_url}/v1",
            model_roles={"judge": judge},
            log_dir=str(tmp_path / "logs"),
            display="none",
        )
    assert log.status == "success", log.error
    return resolve_sample_attachments(log.samples[0])


def test_openclaw_edits_the_staged_workspace_and_grade_scores_it(
    upstream_trees: Path, scripted_policy: str, tmp_path: Path
) -> None:
    sample = _run_openclaw(upstream_trees, TASK_ID, scripted_policy, tmp_path)
    score = sample.scores["qwenclawbench_scorer"]
    # before the edit the staged files grade 0.4 (gated); after it every check passes
    assert score.metadata["grade"] == {
        "subagents_limits_correct": 1.0,
        "tool_deny_policy_correct": 1.0,
        "existing_config_preserved": 1.0,
        "no_fake_fields": 1.0,
        "skill_md_references_real_fields": 1.0,
    }, score.metadata["grade_error"]
    assert score.metadata["s_llm"] == JUDGE_TOTAL
    assert score.value == pytest.approx(0.4 * 1.0 + 0.6 * JUDGE_TOTAL)  # task weights 0.4 / 0.6
    assert score.metadata["tool_calls"] == 1  # OpenClaw's session log holds its exec call
    judged = [e for e in sample.events if e.event == "model" and e.role == "judge"]
    # the judge (upstream's prompt) saw the session's summary: OpenClaw's exec call and what it printed
    assert len(judged) == 1 and "CONFIG-UPDATED" in judged[0].input[0].text
    assert judged[0].input[0].text.startswith("You are a grading function.")
    # OpenClaw ran with upstream's config: the proxy's records show its reply cap and reasoning
    [rollout] = list((tmp_path / "records").iterdir())
    [first, *_] = read_calls(tmp_path / "records", rollout.name)
    assert (
        first.served_request.get("max_tokens") == 32768
        or first.served_request.get("max_completion_tokens") == 32768
    )


#: Its grade() reads only the transcript's assistant text (no workspace check).
COMPACTED_TASK = "task_00043_read_memory_files_and_summarize_novel_preparation"
#: How a provider words a context overflow (OpenClaw's overflow tables match it) and the summary the
#: scripted model writes when OpenClaw asks it to compact.
OVERFLOW = "input exceeds the maximum number of tokens"
SUMMARY = "Summary: the notes were listed."
#: Tool turns before the overflow, each printing 60,000 characters (under OpenClaw's 64,000 per live
#: tool result at upstream's 200k context): OpenClaw compacts only history older than the 20,000 tokens it
#: keeps (`keepRecentTokens`), so a short session answers "Nothing to compact (session too small)".
TOOL_TURNS = 4


@dataclass
class CompactingUpstream(ScriptedUpstream):
    """A first turn that names the novel, tool turns that fill the context, then one context overflow
    (HTTP 400), a summary when OpenClaw compacts, and an answer without the title: grade() finds the
    title only in the turns before the compaction."""

    overflowed: bool = False

    async def chat(self, request: Any) -> Any:
        body = json.loads(await request.body())
        self.requests.append(body)
        messages = body.get("messages", [])
        if "summar" in json.dumps(messages[-1:]).lower() and "conversation" in json.dumps(messages).lower():
            return _answer(SUMMARY)
        if self.overflowed:
            return _answer("Status update: the notes are consistent.")
        done = sum(m.get("role") == "tool" for m in messages)
        if done < TOOL_TURNS:
            command = f"python3 -c \"print('note{done} ' * 10000)\""
            call = EditPolicy().shell_call(body.get("tools") or [], command)
            if call is None:
                return _answer("no shell tool")
            turn = _tool_turn(messages, *call)
            if done == 0:
                turn["message"]["content"] = "Reading the notes of The Borrowed Mind."
            return _chat(turn)
        self.overflowed = True
        error = {"error": {"message": OVERFLOW, "type": "invalid_request_error"}}
        return JSONResponse(error, status_code=400)


def _chat(turn: dict[str, Any]) -> Any:
    choice = {"index": 0, "message": turn["message"], "finish_reason": turn["finish_reason"]}
    usage = {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
    return JSONResponse({"id": "c", "object": "chat.completion", "created": 0, "model": "scripted-policy",
                         "choices": [choice], "usage": usage})


def _answer(text: str) -> Any:
    return _chat({"message": {"role": "assistant", "content": text}, "finish_reason": "stop"})


def test_grade_sees_the_turns_before_openclaws_compaction(upstream_trees: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A real OpenClaw run (upstream's openclaw.json, scripted model) whose context overflows: OpenClaw
    compacts and answers, and upstream's grade() on its session log still sees the turns before."""
    upstream = CompactingUpstream()
    monkeypatch.setenv("SCRIPTED_API_KEY", "unused")
    with serve_in_thread(upstream.app()) as server:
        sample = _run_openclaw(upstream_trees, COMPACTED_TASK, server.url, tmp_path)
    run = next(e.data for e in sample.events if e.event == "info" and e.source == "openclaw")
    assert upstream.overflowed and run["status"] == "completed", run.get("stderr_tail")
    # OpenClaw asked for a summary, then went on from it, without the first turn in the model's context
    assert any(SUMMARY in json.dumps(r.get("messages")) for r in upstream.requests)
    assert SUMMARY in json.dumps(upstream.requests[-1]["messages"])
    assert "Borrowed Mind" not in json.dumps(upstream.requests[-1]["messages"])
    score = sample.scores["qwenclawbench_scorer"]
    assert score.metadata["compactions"] >= 1, score.metadata
    assert sample.output.completion.startswith("Status update")
    # the title is only in the turn before the compaction: grade() read OpenClaw's whole session log
    assert score.metadata["grade"]["novel_title_mentioned"] == 1.0, score.metadata
