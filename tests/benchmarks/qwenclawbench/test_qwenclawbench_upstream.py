"""QwenClawBench graded by upstream's own code from the pinned tree: parity with upstream called directly.

The session store is OpenClaw 2026.9.6's (`transcript_events` in its per-agent SQLite, one event JSON
per row, large ones zstd-compressed), holding a run with a compaction in the middle; the judge is a
scripted Inspect model behind the judge endpoint. Upstream's `grade_task`, called directly on the same
workspace and session log, must give exactly what `grade_run` gives, and `grade()` must see the turns
from before the compaction.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import zstandard
from inspect_ai.model import ModelOutput, get_model

from forge_eval.benchmarks.qwenclawbench import (
    data_root,
    export_sessions,
    grade_run,
    judge_endpoint,
    load_tasks,
    local_config,
    openclaw_config,
    stage_workspace,
    upstream_tree,
)
from forge_eval.harnesses._openclaw import pointed_config
from tests.benchmarks._usage import counted

TREE = "SKYLENAGE-AI+QwenClawBench@e4eefcf"
#: grade() reads the assistant's text in the whole transcript (hybrid, weights 0.4 / 0.6).
TASK_ID = "task_00043_read_memory_files_and_summarize_novel_preparation"
BEFORE = "The novel is The Borrowed Mind: literary sci-fi in Neo-Portland, 2041, an unreliable narrator."
AFTER = "Plot: three-act structure with an ambiguous ending; NeuroLend, residue and echo brokers."
SUMMARY = "## Goal\nSummarize the novel notes.\n## Progress\nRead the memories."
VERDICT = {"scores": {"accuracy": 0.8, "completeness": 0.6}, "total": 0.7, "notes": "scripted judge"}


@pytest.fixture(scope="module")
def tree(upstream_trees: Path) -> Path:
    return upstream_tree(data_root(upstream_trees / TREE))


def _event(kind: str, **fields: Any) -> str:
    return json.dumps({"type": kind, **fields})


def _message(role: str, content: Any, **fields: Any) -> str:
    return _event("message", message={"role": role, "content": content, **fields})


def session_events() -> list[str]:
    """A run as OpenClaw stores it: a tool call and an answer, a compaction, then the rest."""
    path = {"path": "memories/characters.md"}
    call = {"type": "toolCall", "id": "call_1", "name": "read", "arguments": path}
    return [
        _event("session", version=4, id="s1", cwd="/work"),
        _message("user", "Summarize my novel notes."),
        _message("assistant", [call]),
        _message("toolResult", [{"type": "text", "text": "Solace"}], toolCallId="call_1", toolName="read"),
        _message("assistant", [{"type": "text", "text": BEFORE}]),
        _event("compaction", summary=SUMMARY, firstKeptEntryId="x", tokensBefore=180000),
        _message("assistant", [{"type": "text", "text": AFTER}]),
    ]


def write_store(home: Path, events: list[str], compress: int) -> None:
    """OpenClaw 2026.9.6's agent store with `events` of one session; event `compress` zstd-packed."""
    db = home / ".openclaw" / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    db.parent.mkdir(parents=True)
    with sqlite3.connect(db) as c:
        c.execute(
            "CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT,"
            " created_at INTEGER NOT NULL, event_zstd BLOB, PRIMARY KEY (session_id, seq))"
        )
        older = _event("session", version=4, id="z0", cwd="/elsewhere")  # older, written last: not the run's
        c.execute("INSERT INTO transcript_events VALUES (?, ?, ?, ?, ?)", ("z0", 0, older, -1000, None))
        for seq, text in reversed(list(enumerate(events))):  # stored out of order: read by seq
            packed = zstandard.ZstdCompressor().compress(text.encode()) if seq == compress else None
            c.execute(
                "INSERT INTO transcript_events VALUES (?, ?, ?, ?, ?)",
                ("s1", seq, None if packed else text, seq, packed),
            )


#: Upstream's grade_task called directly (no forge-eval code) on the exported session file.
DIRECT = """
import json, sys
from pathlib import Path
tree, task_file, session, workspace = sys.argv[1:5]
sys.path.insert(0, tree + "/scripts")
import lib_grading, lib_tasks
task = lib_tasks.TaskLoader(Path(task_file).parent).load_task(Path(task_file))
transcript = [json.loads(l) for l in Path(session).read_text().splitlines() if l.strip()]
execution = {"transcript": transcript, "workspace": workspace}
result = lib_grading.grade_task(task=task, execution_result=execution, skill_dir=Path(tree))
print(json.dumps(result.to_dict()))
"""


def _judge() -> Any:
    outputs = []
    for _ in range(2):
        output = counted(ModelOutput.from_content("mockllm/model", json.dumps(VERDICT)))
        outputs.append(output)
    return get_model("mockllm/model", custom_outputs=outputs)


def test_grading_matches_upstream_called_directly_and_sees_turns_before_a_compaction(
    tree: Path, tmp_path: Path
) -> None:
    root = data_root(tree)
    task = next(t for t in load_tasks(root) if t.task_id == TASK_ID)
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    stage_workspace(root, task, work)
    write_store(home, session_events(), compress=4)

    async def both() -> tuple[Any, dict[str, Any]]:
        async with judge_endpoint(_judge()) as (url, key):
            ours = await grade_run(tree, task.path, home=home, workspace=work, judge_url=url, judge_key=key)
            exported = export_sessions(home / ".openclaw", tmp_path / "exported")
            [session] = [path for path in exported if path.stem == "s1"]
            env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
            env |= {"JUDGE_BASE_URL": url, "JUDGE_API_KEY": key}
            args = [sys.executable, "-I", "-c", DIRECT, str(tree), str(task.path), str(session), str(work)]
            done = await asyncio.to_thread(subprocess.run, args, capture_output=True, text=True, env=env)
            assert done.returncode == 0, done.stderr[-2000:]
            return ours, json.loads(done.stdout.splitlines()[-1])

    ours, direct = asyncio.run(both())
    assert ours.error == "", ours.log
    assert ours.grade == direct  # exactly: score, score_simple, breakdown, notes
    # upstream picked the newest session file, the store's events byte for byte, in seq order (the packed
    # one unpacked)
    assert [json.dumps(e) for e in ours.transcript] == session_events()
    # grade() saw the answer from before the compaction: title, genre and setting come only from it
    breakdown = ours.automated["breakdown"]
    assert breakdown["novel_title_mentioned"] == 1.0 and breakdown["genre_setting_covered"] == 1.0
    assert breakdown["plot_covered"] == 1.0  # and the one after it
    assert ours.llm_judge["score"] == VERDICT["total"] and ours.grade["grading_type"] == "hybrid"
    auto = ours.automated["score"]
    gated = VERDICT["total"] if auto >= 0.75 else 0.0
    assert ours.score() == pytest.approx(0.4 * auto + 0.6 * gated)
    assert ours.score(simple=True) == pytest.approx(0.4 * auto + 0.6 * VERDICT["total"])


def test_upstream_config_is_changed_only_where_the_provider_is_reached(tree: Path) -> None:
    upstream = openclaw_config(tree)
    pointed, model = pointed_config(upstream, "http://127.0.0.1:9/r/x/0/v1", "rollout-key")
    assert model == "dashscope/qwen3.6-plus"
    provider = pointed["models"]["providers"]["dashscope"]
    assert (provider["baseUrl"], provider["apiKey"]) == ("http://127.0.0.1:9/r/x/0/v1", "rollout-key")
    for changed in ("baseUrl", "apiKey"):
        del provider[changed], upstream["models"]["providers"]["dashscope"][changed]
    assert pointed == upstream  # compaction safeguard, 200000 context, 32768 replies, reasoning, all tools
    assert upstream["agents"]["defaults"]["compaction"] == {"mode": "safeguard"}
    local = local_config(upstream)  # only the web-search plugin the pinned OpenClaw lacks goes
    assert local["tools"]["web"]["search"] == {"enabled": True}
    local["tools"]["web"]["search"]["provider"] = "brave"
    assert local == upstream


def test_task_data_without_upstream_code_is_refused_with_the_fix(qwenclawbench_data: Path) -> None:
    from forge_eval._errors import ForgeError

    with pytest.raises(ForgeError, match="without upstream's code") as e:
        upstream_tree(data_root(qwenclawbench_data))
    assert "SKYLENAGE-AI/QwenClawBench" in (e.value.hint or "")


def test_protocol_record_names_upstreams_files_and_what_differs(tree: Path) -> None:
    from forge_eval.benchmarks import BENCHMARKS
    from forge_eval.benchmarks._benchmark import RunUsed

    entry = BENCHMARKS.get("qwenclawbench")
    ids = tuple(sorted(t.task_id for t in load_tasks(data_root(tree))))
    args = {"data_dir": str(tree), "timeout_multiplier": 1.0, "simple": False, "judge_max_tokens": None}
    run = RunUsed(harness="openclaw", task_args=args, judge_model=entry.official.judge_model, task_ids=ids)
    record = entry.protocol(run)
    assert {k for k in ("task_set", "harness", "agent_prompt", "judge_prompt", "grader", "data")} <= {
        e.element for e in record.elements
    }
    # what differs: the OpenClaw build and command (pinned npm `agent exec` vs the image's `agent`), the
    # config less the web-search plugin that build lacks, and the sandbox (upstream's has the network)
    assert [e.name for e in record.elements if not e.matches] == [
        "harness: OpenClaw build and command",
        "harness: OpenClaw config",
        "environment",
    ]
    assert record.comparable is False
    config = next(e for e in record.elements if e.name == "harness: OpenClaw config")
    assert config.official.path == "openclaw_config/openclaw.json.example" and "brave" in config.ours.what
    prompt = record.of("judge_prompt")[0]
    assert prompt.ours.symbol == "_build_judge_prompt" and prompt.ours.path == "scripts/lib_grading.py"
    assert len(prompt.ours.sha256) == 64
    environment = next(e for e in record.elements if e.element == "environment")
    assert environment.equivalent is None and "network" in (environment.note or "")
    # a smoke-test judge, a capped judge and simple scoring each show up as a difference
    capped = {**args, "judge_max_tokens": 256, "simple": True}
    other = RunUsed(harness="openclaw", task_args=capped, judge_model="mockllm/model", task_ids=ids[:5])
    differs = {e.name for e in entry.protocol(other).elements if not e.matches}
    assert differs == {
        "harness: OpenClaw build and command",
        "harness: OpenClaw config",
        "environment",
        "judge model",
        "judge reply cap",
        "grader: hybrid scoring",
        "task set and subset",
    }


def test_openclaw_launch_with_upstreams_config_keeps_its_sessions_in_the_sandbox_home(
    tree: Path, tmp_path: Path
) -> None:
    from forge_eval.harnesses import HARNESSES, ProxyEndpoint
    from forge_eval.harnesses._workspace import Workspace

    workspace = Workspace(tmp_path).create()
    harness = HARNESSES.get("openclaw")
    chosen = harness.with_config(local_config(openclaw_config(tree)))
    launch = chosen.launch(
        prompt="p",
        proxy=ProxyEndpoint("http://127.0.0.1:1/r/x/0", "key"),
        workspace=workspace,
        prefix=tmp_path,
    )
    [(path, text)] = launch.files.items()
    assert path == workspace.home / ".openclaw" / "openclaw.json"  # where upstream's image mounts it
    assert (
        json.loads(text)
        == pointed_config(local_config(openclaw_config(tree)), "http://127.0.0.1:1/r/x/0/v1", "key")[0]
    )
    argv = launch.argv
    assert argv[argv.index("--model") + 1] == "dashscope/qwen3.6-plus"
    assert argv[argv.index("--state-dir") + 1] == str(workspace.home / ".openclaw")
    assert harness.config_template is None  # the registered harness keeps forge-eval's own config


class FlakyJudge:
    """A judge model whose first call fails (as a provider outage would), then answers `VERDICT`."""

    def __init__(self) -> None:
        self.calls = 0

    async def generate(self, messages: list[Any], config: Any = None) -> ModelOutput:
        self.calls += 1
        if self.calls == 1:
            raise RuntimeError("judge provider unavailable")
        return ModelOutput.from_content("flaky/judge", json.dumps(VERDICT))


def test_a_failed_judge_call_is_retried_by_upstreams_own_loop(tree: Path, tmp_path: Path) -> None:
    root = data_root(tree)
    task = next(t for t in load_tasks(root) if t.task_id == TASK_ID)
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    stage_workspace(root, task, work)
    write_store(home, session_events(), compress=-1)
    judge = FlakyJudge()

    async def grade() -> Any:
        async with judge_endpoint(judge) as (url, key):  # type: ignore[arg-type]
            return await grade_run(tree, task.path, home=home, workspace=work, judge_url=url, judge_key=key)

    graded = asyncio.run(grade())
    assert judge.calls == 2  # upstream waited its backoff (5 s) and called again
    assert "retry 2/100" in graded.log and "judge provider unavailable" in graded.log
    assert graded.llm_judge["score"] == VERDICT["total"]


def test_session_export_follows_no_symlink_the_sandbox_left_and_writes_nothing_in_its_home(
    tmp_path: Path,
) -> None:
    host = tmp_path / "host"
    host.mkdir()
    (host / "secret.sqlite").write_bytes(b"host data")
    state = tmp_path / "home" / ".openclaw"
    write_store(tmp_path / "home", session_events(), compress=-1)
    planted = state / "agents" / "other" / "agent"
    planted.mkdir(parents=True)
    (planted / "openclaw-agent.sqlite").symlink_to(host / "secret.sqlite")  # a host file behind a link
    (state / "agents" / "main" / "sessions").symlink_to(host)  # where a writer following links would go
    before = sorted(p.name for p in host.iterdir())
    written = export_sessions(state, tmp_path / "out")
    assert [p.relative_to(tmp_path / "out").as_posix() for p in written] == [
        "agents/main/sessions/s1.jsonl",
        "agents/main/sessions/z0.jsonl",
    ]
    assert sorted(p.name for p in host.iterdir()) == before
