"""QwenClawBench's protocol record: upstream's runner (`scripts/benchmark.py` with its Docker harness) is
the official side; this run's side names where each element came from.

Read from the pinned tree at run time, so the same on both sides: the OpenClaw config, the task prompt
sent alone as the message, the transcript loader, the grading with its judge prompt, retries and hybrid
score. Ours, so the run is not comparable: OpenClaw is the pinned npm package run as `openclaw agent
exec` (upstream: the unpinned image `ghcr.io/openclaw/openclaw:main`, `openclaw agent --agent ...`), and
tasks this machine cannot run are skipped. The sandbox differs too: upstream's Docker container has the
network and its OpenClaw config enables web search and fetch, ours (bubblewrap) reaches only the proxy.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from forge_eval.benchmarks._benchmark import RunUsed, task_set
from forge_eval.benchmarks.qwenclawbench._data import DATASET, data_root, load_tasks
from forge_eval.benchmarks.qwenclawbench._judge import JUDGE_MAX_TOKENS, OFFICIAL_JUDGE
from forge_eval.benchmarks.qwenclawbench._upstream import (
    AGENT_FILE,
    COMMIT,
    CONFIG_FILE,
    GRADING_FILE,
    REPO,
    UNAVAILABLE_SEARCH_PROVIDER,
    local_config,
    openclaw_config,
    upstream_tree,
)
from forge_eval.harnesses import HARNESSES
from forge_eval.rundir import NotUsed, Ours, ProtocolRecord, Upstream, Value, element, sha256_files

DOCKER_FILE = "scripts/lib_docker.py"
OFFICIAL_IMAGE = "ghcr.io/openclaw/openclaw:main"
OFFICIAL_COMMAND = "openclaw agent --agent <id> --session-id <id> --message <prompt>"
OURS_COMMAND = (
    "openclaw agent exec <prompt> --config <openclaw.json> --state-dir ~/.openclaw --cwd <workspace>"
)


def _upstream(tree: Path, path: str, symbol: str | None = None, value: Any = None) -> Upstream:
    return Upstream.file(tree, repo=REPO, commit=COMMIT, path=path, symbol=symbol, value=value)


def _harness(run: RunUsed, tree: Path) -> list:
    args = run.task_args
    multiplier = float(args.get("timeout_multiplier") or 1.0)
    official = Value(
        value={"program": OFFICIAL_IMAGE, "command": OFFICIAL_COMMAND, "timeout_multiplier": 1.0},
        label=f"OpenClaw from the image {OFFICIAL_IMAGE} (a moving tag), `{OFFICIAL_COMMAND}`, "
        "task timeouts x1",
    )
    version = HARNESSES.get(run.harness).version if run.harness in HARNESSES else run.harness
    ours = Value(
        value={"program": version, "command": OURS_COMMAND, "timeout_multiplier": multiplier},
        label=f"{version}, `{OURS_COMMAND}`, task timeouts x{multiplier:g}",
    )
    exec_note = (
        "exec mode's own defaults where the config sets nothing: no workspace bootstrap files, the coding "
        "tool profile, file tools confined to the workspace"
    )
    return [
        element("harness", official, ours, name="harness: OpenClaw build and command", note=exec_note),
        element(
            "harness",
            _upstream(tree, CONFIG_FILE),
            Ours.text(
                f"upstream's {CONFIG_FILE} less tools.web.search.provider "
                f"'{UNAVAILABLE_SEARCH_PROVIDER}' (a plugin the pinned OpenClaw lacks)",
                json.dumps(local_config(openclaw_config(tree)), sort_keys=True),
            ),
            name="harness: OpenClaw config",
            note="besides, only the primary model's provider baseUrl and apiKey point at the sample's proxy",
        ),
    ]


def protocol(run: RunUsed) -> ProtocolRecord:
    """Official (upstream's runner) and this run's side of every protocol element."""
    args = run.task_args
    root = data_root(args.get("data_dir"))
    tree = upstream_tree(root)
    all_ids = [t.task_id for t in load_tasks(root)]
    grading = _upstream(tree, GRADING_FILE, symbol="grade_task")
    simple = bool(args.get("simple"))
    cap = args.get("judge_max_tokens") or JUDGE_MAX_TOKENS
    data = Value(value={"repo": REPO, "commit": COMMIT, "dataset": DATASET})
    return ProtocolRecord(
        elements=[
            run.task_set_element(
                task_set(all_ids, "all"),
                note=f"{len(run.skipped)} task(s) skipped here" if run.skipped else None,
            ),
            *_harness(run, tree),
            element(
                "agent_prompt",
                _upstream(
                    tree, DOCKER_FILE, symbol="execute_task_in_docker: the task's ## Prompt as --message"
                ),
                note="the task's prompt alone; OpenClaw builds its own system prompt around it",
            ),
            element(
                "agent_sampling",
                Value(
                    value={},
                    label="what OpenClaw sends with upstream's config (maxTokens 32768, reasoning on)",
                ),
                Value(value=dict(run.sampling)),
            ),
            element(
                "judge_model",
                Value(value=OFFICIAL_JUDGE),
                Value(value=run.judge_model, label=run.judge_model or "none"),
            ),
            element("judge_model", Value(value=JUDGE_MAX_TOKENS), Value(value=cap), name="judge reply cap"),
            element("judge_prompt", _upstream(tree, GRADING_FILE, symbol="_build_judge_prompt")),
            element("user_model", NotUsed(why="one prompt per task: no simulated user")),
            element(
                "grader", grading, name="grader: grade_task (grade(), judge retries and fallback, hybrid)"
            ),
            element(
                "grader", _upstream(tree, AGENT_FILE, symbol="_load_transcript"), name="grader: transcript"
            ),
            element(
                "grader",
                Value(value="penalized"),
                Value(value="simple" if simple else "penalized"),
                name="grader: hybrid scoring",
            ),
            element(
                "environment",
                Value(value="docker", label="a Docker container per task (network open)"),
                Value(
                    value="bubblewrap",
                    label="a bubblewrap sandbox per task (loopback only, the proxy's port)",
                ),
                note="upstream's container has the network and its config enables web search and fetch",
            ),
            element(
                "data",
                data,
                data,
                note=f"{DATASET} tasks sha256 {sha256_files([root / 'tasks'])[:12]}, read from {root}",
            ),
        ]
    )
