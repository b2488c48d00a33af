"""Upstream's claw-eval at the pinned commit: its tree, and the isolated interpreter its code runs in.

Every piece of Claw-Eval that decides what the model sees or how it is scored (runner loop, system
prompt, provider, mock services, sandbox server, simulated user, graders, LLM judge, task score) is
upstream's own code, read at run time from the pinned tree (`--data-dir`, else the archive
`benchmarks/_acquire.py` downloads). It runs in a virtualenv of its own, so upstream's unpinned
requirements never meet forge-eval's (`forge_eval.upstream.UpstreamVenv`): the venv holds the packages
of upstream's two requirement files (`requirements.txt`, `requirements-sandbox-server.txt`), and
`claw_eval` itself is imported from the tree (`PYTHONPATH=<tree>/src`), because its graders find `tasks/`
relative to their own file. forge-eval talks to that code only through subprocesses (`_driver/`), never by
importing it.
"""

from __future__ import annotations

import os
from pathlib import Path

from forge_eval.benchmarks._acquire import DataSource, cache_root, locate_data
from forge_eval.upstream import UpstreamVenv

REPO = "claw-eval/claw-eval"
COMMIT = "9365e1a96ec084a5c8820cdf438e7fb4e1a83b90"
SOURCE = DataSource(
    benchmark="claweval",
    repo=REPO,
    revision=COMMIT,
    # the whole tree, not only the task data: its code runs the benchmark
    marker="src/claw_eval/runner/loop.py",
    subdirs=("claw-eval+claw-eval@9365e1a", "claw-eval"),
    task_of=r"tasks/(?P<task>[^/]+)/",
)
#: The key upstream's live-web services (`mock_services/web_real*`) read from their environment, as its
#: README says to export it; the trial's driver hands it to them (never to the agent's sandbox).
SERP_KEY = "SERP_DEV_KEY"
#: Upstream's requirement files, installed into the venv as they are.
REQUIREMENTS = ("requirements.txt", "requirements-sandbox-server.txt")
#: Points a run at a venv built elsewhere (where PyPI is reachable).
VENV_VAR = "FORGE_CLAWEVAL_VENV"


def upstream_tree(data_dir: Path | str | None = None) -> Path:
    """The pinned upstream tree: `--data-dir` (the tree or a folder holding it), the cache, or a download."""
    return locate_data(SOURCE, data_dir)


def venv_dir() -> Path:
    """Where upstream's venv lives: `$FORGE_CLAWEVAL_VENV`, else `<forge cache>/claweval/venv`."""
    given = os.environ.get(VENV_VAR)
    return Path(given).resolve() if given else cache_root().parent / "claweval" / "venv"


def venv(path: Path | None = None) -> UpstreamVenv:
    """Upstream's venv (at `path`, else `venv_dir()`), built from its requirement files."""
    return UpstreamVenv("claweval", "Claw-Eval", path or venv_dir(), REQUIREMENTS, VENV_VAR)


def ensure_venv(tree: Path, path: Path | None = None) -> Path:
    """Upstream's venv, built on first use from `tree`'s requirements (`UpstreamVenv.ensure`): its python."""
    return venv(path).ensure(tree)


def base_interpreter(path: Path | None = None) -> Path:
    """The installation the venv's python comes from (a sandbox running it must see it)."""
    return venv(path).base_interpreter()
