"""One Claw-Eval trial, run by upstream's own code: `python run_trial.py SPEC.json`.

Runs in upstream's venv with `PYTHONPATH=<tree>/src` and the working directory at the tree root (as
`claw-eval batch` is run). It calls `claw_eval.cli._run_single_task` -- the function each worker of
`claw-eval batch --trials 1` runs: upstream's mock services (`ServiceManager`, on the task's ports moved by
`port_offset` as batch's workers move them), runner loop (`run_task`: system prompt, provider and its
temperature, tools, compaction, simulated user), grader-only files, environment snapshot, grader, LLM
judge, task score, and the grading event appended to the trace. With `sandbox_url` set (`batch --sandbox`)
the one piece replaced is Docker: `SandboxRunner` hands over the sandbox server forge-eval started for this
trial instead of starting a container, and before it pushes the grader-only files forge-eval ends what
the agent left running in the sandbox (asked over `leftovers_fd`, a socket forge-eval passed in); file
injection and everything else are upstream's.

SPEC.json: task_dir, config, model, api_key, base_url, trace_dir, port_offset, sandbox_url (or null),
leftovers_fd (with sandbox_url), result (where the result dict goes).
"""

import json
import socket
import sys
from pathlib import Path


def _hand_over_sandbox(sandbox_url: str, leftovers_fd: int) -> None:
    """`SandboxRunner` with the trial's running sandbox server in place of a Docker container."""
    from claw_eval.runner import sandbox_runner  # upstream's package: only in its venv

    upstream = sandbox_runner.SandboxRunner
    leftovers = socket.socket(fileno=leftovers_fd)

    class ForgeSandbox(upstream):
        def __init__(self, sandbox_config, *, image=None):  # no Docker client
            self._config = sandbox_config
            self._image = image or sandbox_config.image

        def start_container(self, *, run_id):
            return sandbox_runner.ContainerHandle(
                container=None,
                host_port=int(sandbox_url.rsplit(":", 1)[1]),
                run_id=run_id,
                sandbox_url=sandbox_url,
            )

        def inject_grader_files(self, handle, task, *, task_dir=None):
            _end_leftovers(leftovers)
            return upstream.inject_grader_files(handle, task, task_dir=task_dir)

        def stop_container(self, handle):
            return None  # forge-eval stops it after this process

    sandbox_runner.SandboxRunner = ForgeSandbox


def _end_leftovers(channel: socket.socket) -> None:
    """Ask forge-eval to end every process of the sandbox but the server, and wait until it has: nothing
    the agent started may be alive when the grader-only files (verify scripts, answers) go in."""
    channel.sendall(b"\n")
    if channel.recv(1) != b"\n":
        raise RuntimeError("forge-eval did not end the agent's processes in the sandbox; no grading")


def main() -> None:
    spec = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    from claw_eval import cli  # upstream's package: only in its venv

    if spec.get("sandbox_url"):
        _hand_over_sandbox(spec["sandbox_url"], spec["leftovers_fd"])
    result = cli._run_single_task(
        task_dir=spec["task_dir"],
        config_path=spec["config"],
        model=spec["model"],
        api_key=spec["api_key"],
        base_url=spec["base_url"],
        trace_dir=spec["trace_dir"],
        port_offset=spec["port_offset"],
        no_judge=False,
        judge_model=None,
        trials=1,
        proxy=None,
        sandbox=bool(spec.get("sandbox_url")),
    )
    Path(spec["result"]).write_text(json.dumps(result, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
