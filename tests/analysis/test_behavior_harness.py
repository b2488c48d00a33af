"""Real Codex CLI and Claude Code runs, through forge-eval's recording proxy into Inspect, analyzed.

The harness runs its own tools, so Inspect logs only ModelEvents (the proxy's upstream is the sample's
model, a scripted `mockllm`); the proxy also writes its call records. The reader must recover the
harness's shell calls and their real outputs (each harness reports exit codes its own way), and join
the proxy records to the sample. Needs the binaries (scripts/setup.d/30-harnesses.sh); skipped without.
"""

import asyncio
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from _behavior_logs import run_dir
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage, get_model
from inspect_ai.solver import Generate, TaskState, solver

from forge_eval.analysis.behavior import capability_values, read_run_transcripts
from forge_eval.proxy import InspectUpstream, ProxyConfig, create_app, serve_in_task
from forge_eval.proxy.records import RolloutRecord
from tests.proxy._harnesses import NODE24_BIN, NPM_BIN, codex_args, openclaw_args, openclaw_config

SEED = 5
COMMANDS = ["printf hi > hello.txt", "cat hello.txt", "ls missing_dir"]
PROMPT = "create hello.txt containing hi, then check it"
MISSING = "missing_notes.txt"  # relative: inside the workspace, where every harness may read
# each harness's own non-shell tool that reads a file, and its path argument: the failed read at the end
READ_TOOLS = {"Read": "file_path", "read": "path", "view_image": "path"}

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class HarnessRun:
    """How to run one harness against a proxy base URL (`argv`, extra `env`) and its shell tool."""

    binary: str
    shell_tool: str
    command_arg: str
    argv: Callable[[str, Path], list[str]]  # (proxy base URL, private home) -> arguments
    env: Callable[[str, Path], dict[str, str]]


def _codex_argv(base_url: str, home: Path) -> list[str]:
    return [*codex_args(f"{base_url}/v1", model="inspect", env_key="KEY", events=False), PROMPT]


def _claude_argv(base_url: str, home: Path) -> list[str]:
    return ["-p", PROMPT, "--permission-mode", "acceptEdits", "--allowedTools", "Bash", "--model", "inspect"]


def _openclaw_argv(base_url: str, home: Path) -> list[str]:
    """OpenClaw reads its provider from a config file, written here (Chat Completions wire API)."""
    config = openclaw_config(f"{base_url}/v1", "unused", model="inspect")
    (home / "openclaw.json").write_text(json.dumps(config))
    return openclaw_args(PROMPT, home / "openclaw.json", home.parent / "work", model="inspect")


HARNESS_RUNS = {
    "codex": HarnessRun(
        "codex",
        "exec_command",
        "cmd",
        _codex_argv,
        lambda url, home: {"CODEX_HOME": str(home / ".codex"), "KEY": "unused"},
    ),
    "claude_code": HarnessRun(
        "claude",
        "Bash",
        "command",
        _claude_argv,
        lambda url, home: {
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "ANTHROPIC_BASE_URL": url,
            "ANTHROPIC_API_KEY": "unused",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
        },
    ),
    "openclaw": HarnessRun(
        "openclaw",
        "exec",
        "command",
        _openclaw_argv,
        lambda url, home: {"OPENCLAW_HOME": str(home), "OPENCLAW_STATE_DIR": str(home / ".openclaw")},
    ),
}


def _policy(messages, tools, tool_choice, config) -> ModelOutput:
    """Run COMMANDS one per turn through the harness's shell tool, then answer."""
    done = sum(isinstance(m, ChatMessageTool) for m in messages)
    names = {t.name for t in tools}
    shell = next((h for h in HARNESS_RUNS.values() if h.shell_tool in names), None)
    read = next((r for r in READ_TOOLS if r in names), None)
    if shell is not None and done < len(COMMANDS):
        arguments = {shell.command_arg: COMMANDS[done]}
        output = ModelOutput.for_tool_call("mockllm/model", shell.shell_tool, arguments)
    elif read is not None and done == len(COMMANDS):
        output = ModelOutput.for_tool_call("mockllm/model", read, {READ_TOOLS[read]: MISSING})
    else:
        output = ModelOutput.from_content("mockllm/model", "Done: hello.txt contains hi.")
    output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return output


@solver
def through_proxy(harness: HarnessRun, records: Path, work_root: Path):
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        app = create_app(ProxyConfig(records_dir=records, secret="s"), InspectUpstream(None))
        rollout = f"{state.sample_id}-s{SEED}-e{state.epoch}"
        record = RolloutRecord(
            rollout_id=rollout, task_id=str(state.sample_id), mode="eval", seed=SEED, epoch=1
        )
        app.state.proxy.rollouts.add(record)
        work, home = work_root / "work", work_root / "home"
        for folder in (work, home / ".codex", home / ".claude"):  # the harnesses' config dirs must exist
            folder.mkdir(parents=True)
        path = [str(NODE24_BIN), str(NPM_BIN), os.environ["PATH"]]
        async with serve_in_task(app) as url:
            base_url = f"{url}/r/{rollout}/0"
            env = {
                "PATH": os.pathsep.join(path),
                "HOME": str(home),
                "TMPDIR": str(work_root),
                "LANG": "C.UTF-8",
            }
            process = await asyncio.create_subprocess_exec(
                str(NPM_BIN / harness.binary),
                *harness.argv(base_url, home),
                cwd=work,
                env={**env, **harness.env(base_url, home)},
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            out, err = await asyncio.wait_for(process.communicate(), 150)
        assert process.returncode == 0, (err.decode() + out.decode())[-3000:]
        assert (work / "hello.txt").read_text() == "hi"
        return state

    return solve


@pytest.fixture(scope="module", params=sorted(HARNESS_RUNS))
def harness_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    name = request.param
    harness = HARNESS_RUNS[name]
    if not (NPM_BIN / harness.binary).exists():
        pytest.skip(
            f"{harness.binary} is not installed: run `bash scripts/setup.d/30-harnesses.sh` (CI does)"
        )
    root = tmp_path_factory.mktemp(name)
    task = Task(
        dataset=[Sample(id="hello", input="unused", target="hi")],
        solver=through_proxy(harness, root / "run" / "records", root / "harness"),
    )
    model = get_model("mockllm/model", custom_outputs=_policy)
    [log] = eval(task, model=model, log_dir=str(root / "raw"), display="none")
    assert log.status == "success", log.error
    log.eval.task_args["seed"] = SEED
    return name, run_dir(root / "run", [log], harness=name, passed={("hello", SEED, 1): True})


def test_shell_calls_results_and_exit_codes_are_read(harness_run: tuple[str, Path]) -> None:
    name, run = harness_run
    t = read_run_transcripts(run)
    shell = t.calls[t.calls["tool"] == HARNESS_RUNS[name].shell_tool].reset_index(drop=True)
    assert [a[HARNESS_RUNS[name].command_arg] for a in shell["arguments"]] == COMMANDS
    assert shell["access"].tolist() == ["write", "read", "read"]
    assert "hi" in shell.loc[1, "result"]
    assert shell["error_kind"].tolist() == ["", "", "nonzero_exit"], shell["result"].tolist()
    assert shell["generic_shell"].all()
    values = capability_values(t.rollouts, t.calls).iloc[0]
    assert values["self_verification"] == 100.0 and values["error_recovery"] == 100.0


def test_proxy_records_of_the_run_join_the_sample(harness_run: tuple[str, Path]) -> None:
    t = read_run_transcripts(harness_run[1])
    assert t.rollouts["records"].tolist() == ["matched"]
    assert t.rollouts["ended_malformed"].tolist() == [False]


def test_a_failed_read_is_a_tool_error(harness_run: tuple[str, Path]) -> None:
    """The harness's own read tool on a missing file (Claude Code `Read`, OpenClaw `read`, Codex
    `view_image`) failed: the transcript must say so, whatever the harness's way of saying it."""
    t = read_run_transcripts(harness_run[1])
    reads = t.calls[t.calls["tool"].isin(list(READ_TOOLS))]
    assert len(reads) == 1, t.calls["tool"].tolist()
    assert reads["error_kind"].tolist() == ["tool_error"], reads["result"].tolist()
    assert reads["failed"].all()
