"""Upstream's QwenClawBench at the pinned commit: its tree, its OpenClaw config and its grading, called there.

Everything of QwenClawBench that decides what the model sees or how a run is scored is upstream's own,
read at run time from the pinned tree (`--data-dir`, else the archive `benchmarks/_acquire.py`
downloads): the OpenClaw config (`openclaw_config/openclaw.json.example`), the transcript loader
(`scripts/lib_agent.py` `_load_transcript`), the task loader and the grading (`scripts/lib_grading.py`
`grade_task`: the task's `grade()`, the judge's prompt builder, transcript summary, retries and
fallback, the hybrid combination). The grading runs in a child interpreter (`_grading_child.py`), so
upstream's modules and the task's `grade()` never load into this process; the judge in it reaches the
model bound to Inspect's `judge` role through a loopback endpoint served here (`judge_endpoint`).
"""

from __future__ import annotations

import asyncio
import copy
import json
import secrets
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.model import GenerateConfig, Model, get_model, messages_from_openai
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from forge_eval._errors import ForgeError
from forge_eval.benchmarks._judge import JUDGE_ROLE
from forge_eval.benchmarks.qwenclawbench._data import SOURCE
from forge_eval.benchmarks.qwenclawbench._session import export_sessions
from forge_eval.proxy import serve_in_task

REPO = SOURCE.repo
COMMIT = SOURCE.revision
#: Upstream's files a run reads (tree-relative), by role.
CONFIG_FILE = "openclaw_config/openclaw.json.example"
GRADING_FILE = "scripts/lib_grading.py"
AGENT_FILE = "scripts/lib_agent.py"
TASKS_FILE = "scripts/lib_tasks.py"
UPSTREAM_FILES = (CONFIG_FILE, GRADING_FILE, AGENT_FILE, TASKS_FILE)
_CHILD = Path(__file__).with_name("_grading_child.py")
_MARKER = "@@QCB@@"
#: Seconds one grading may take: upstream's judge call timeout (DEFAULT_JUDGE_TIMEOUT_SECONDS), plus
#: grade() and the transcript lookup; past it the run scores 0 with the reason.
GRADING_TIMEOUT_S = 1800 + 300


def upstream_tree(data_root: Path) -> Path:
    """The upstream repository holding the dataset folder `data_root` (`<tree>/data/<dataset>`).

    Raises:
        ForgeError: the data copy has no upstream code beside it (a copy of the task folder alone).
    """
    tree = data_root.parents[1] if len(data_root.parents) > 1 else data_root
    missing = [f for f in UPSTREAM_FILES if not (tree / f).is_file()]
    if missing:
        raise ForgeError(
            f"{data_root} is QwenClawBench task data without upstream's code beside it (no "
            f"{', '.join(missing)} under {tree}): the OpenClaw config, the transcript loader and the "
            "grading are read from the upstream repository at run time",
            hint=f"pass --data-dir a checkout of github.com/{REPO} at {COMMIT[:7]} (the repository "
            "root), or leave --data-dir out to download it",
        )
    return tree


def openclaw_config(tree: Path) -> dict[str, Any]:
    """Upstream's OpenClaw config, as its Docker harness mounts it (`~/.openclaw/openclaw.json`)."""
    return json.loads((tree / CONFIG_FILE).read_text(encoding="utf-8"))


#: Upstream's web-search provider: a plugin the pinned npm OpenClaw does not ship; with it in the config
#: OpenClaw refuses to start ("web_search provider is not available: brave"). Sandboxed runs have no
#: network, so web search could not answer either way.
UNAVAILABLE_SEARCH_PROVIDER = "brave"


def local_config(config: dict[str, Any]) -> dict[str, Any]:
    """`config` less what the pinned OpenClaw cannot load (`UNAVAILABLE_SEARCH_PROVIDER`); nothing else."""
    doc = copy.deepcopy(config)
    search = doc.get("tools", {}).get("web", {}).get("search", {})
    if search.get("provider") == UNAVAILABLE_SEARCH_PROVIDER:
        del search["provider"]
    return doc


@dataclass(frozen=True)
class UpstreamGrade:
    """What upstream's `grade_task` made of one run, as its `GradeResult.to_dict()` says.

    Attributes:
        grade: `grade_task`'s result (score, score_simple, breakdown, notes, grading_type); None when
            it raised (upstream's runner then scores the run 0 with the error as its note).
        automated: `_grade_automated`'s result (the task's `grade()`), when it ran.
        llm_judge: `_grade_llm_judge`'s result, when it ran.
        transcript: The session events `_load_transcript` read (what `grade()` and the judge saw).
        error: Why there is no `grade`.
        log: The tail of upstream's log lines (judge attempts, transcript lookup).
    """

    grade: dict[str, Any] | None
    automated: dict[str, Any] | None = None
    llm_judge: dict[str, Any] | None = None
    transcript: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""
    log: str = ""

    def score(self, simple: bool = False) -> float:
        """The run's score (upstream's `score`, or `score_simple` for `--simple-scoring`); 0 on error."""
        if self.grade is None:
            return 0.0
        return float(self.grade["score_simple" if simple else "score"])


def session_agent(home: Path) -> str:
    """The OpenClaw agent whose sessions a run left under `home/.openclaw/agents` (`main` if none)."""
    agents = home / ".openclaw" / "agents"
    found = sorted(p.name for p in agents.iterdir() if p.is_dir()) if agents.is_dir() else []
    return found[0] if len(found) == 1 else "main"


async def grade_run(
    tree: Path,
    task_file: Path,
    *,
    home: Path,
    workspace: Path,
    judge_url: str,
    judge_key: str,
    started_at: float = 0.0,
    status: str = "success",
    timeout_s: float = GRADING_TIMEOUT_S,
) -> UpstreamGrade:
    """Upstream's transcript loading and `grade_task` on one finished run (see the module doc).

    `home` is the run's sandbox home (OpenClaw's state in `home/.openclaw`); `workspace` what the agent
    left. OpenClaw's stored sessions are written out as the JSONL files upstream's loader reads
    (`_session.py`) into a private home of ours, never into the agent's. The child runs isolated (`-I`:
    the agent's workspace is its working directory, and a `json.py` left there must not shadow the
    standard library), with `HOME` = that private home and the judge's endpoint; no
    `openclaw` is on its PATH, so upstream's judge fallback (an OpenClaw agent as judge) finds none, as
    upstream's does on a machine without it, instead of running one unsandboxed here.
    """
    with tempfile.TemporaryDirectory(prefix="forge-qcb-grading-") as private:
        grading_home = Path(private)
        try:
            await asyncio.to_thread(export_sessions, home / ".openclaw", grading_home / ".openclaw")
        except ForgeError as e:
            return UpstreamGrade(None, error=str(e))
        job = {
            "scripts": str(tree / "scripts"),
            "task_file": str(task_file),
            "agent_id": session_agent(grading_home),
            "session_id": "forge-eval",
            "started_at": started_at,
            "workspace": str(workspace),
            "status": status,
            "skill_dir": str(tree),
        }
        env = {
            "HOME": str(grading_home),
            "PATH": "/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "JUDGE_BASE_URL": judge_url,
            "JUDGE_API_KEY": judge_key,
        }
        return await _grade_child(job, env, workspace, timeout_s)


async def _grade_child(
    job: dict[str, Any], env: dict[str, str], cwd: Path, timeout_s: float
) -> UpstreamGrade:
    """Run `_grading_child.py` on `job` (its stdin) with exactly `env`, in `cwd`; its report, or why none."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-I", str(_CHILD),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env=env,
    )  # fmt: skip
    try:
        out, err = await asyncio.wait_for(process.communicate(json.dumps(job).encode()), timeout_s)
    except TimeoutError:
        process.kill()
        await process.wait()
        return UpstreamGrade(None, error=f"upstream's grading ran longer than {timeout_s:.0f} s")
    stdout, log = out.decode(errors="replace"), err.decode(errors="replace")[-4000:]
    marker = stdout.rfind(_MARKER)
    if process.returncode != 0 or marker < 0:
        return UpstreamGrade(None, error=f"upstream's grading failed: {log[-800:] or 'no output'}", log=log)
    report = json.loads(stdout[marker + len(_MARKER) :])
    return UpstreamGrade(
        grade=report.get("grade"),
        automated=report.get("automated"),
        llm_judge=report.get("llm_judge"),
        transcript=report.get("transcript") or [],
        error=report.get("error", ""),
        log=log,
    )


def _judge_app(model: Model, key: str, max_tokens: int | None = None) -> Starlette:
    """OpenAI chat completions (the subset upstream's `_call_llm_judge_api` sends: messages,
    temperature, max_tokens, the last capped at `max_tokens` when given) answered by `model`. Written
    here because the recording proxy serves harness rollouts (signed per-rollout keys and records); the
    judge needs one stateless route."""

    async def chat(request: Request) -> JSONResponse:
        if request.headers.get("authorization") != f"Bearer {key}":
            return JSONResponse({"error": {"message": "bad key"}}, status_code=401)
        body = await request.json()
        asked = body.get("max_tokens")
        capped = min(asked, max_tokens) if asked and max_tokens else (asked or max_tokens)
        config = GenerateConfig(temperature=body.get("temperature"), max_tokens=capped)
        try:
            output = await model.generate(await messages_from_openai(body.get("messages", [])), config=config)
        except Exception as e:  # the judge model failed: upstream's retry sees an HTTP error, as from an API
            return JSONResponse({"error": {"message": f"{type(e).__name__}: {e}"}}, status_code=502)
        message = {"role": "assistant", "content": output.completion}
        return JSONResponse(
            {"object": "chat.completion", "model": str(model), "choices": [{"message": message}]}
        )

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


@asynccontextmanager
async def judge_endpoint(
    model: Model | None = None, max_tokens: int | None = None
) -> AsyncIterator[tuple[str, str]]:
    """(base URL, key) of a loopback endpoint answering with `model` (default: the judge-role model)."""
    key = secrets.token_urlsafe(24)
    async with serve_in_task(_judge_app(model or get_model(role=JUDGE_ROLE), key, max_tokens)) as url:
        yield f"{url}/v1", key
