"""Who may read a run directory: this uid only, unless the user shares it (`forge-eval run --shared-run-dir`).

A run's logs and records hold the transcripts and the model's answers: no other uid on the host (another
user, a later run's sandboxed agent, the web benchmarks' browser) may read them. The run directory is made
0700, so nothing below it is reachable by another uid whatever the modes of the files Inspect writes
there (with the process umask, which stays as it is: the sandboxes' work dirs rely on it). The files and
folders forge-eval knows are made 0700/0600 as well, so that they stay private in a directory that keeps
its mode (an existing one holding other things) or when the tree is copied with its modes.
"""

import os
from contextlib import suppress
from pathlib import Path

from forge_eval.rundir._paths import RunDir

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600

_FILES = (
    RunDir.RESULTS,
    RunDir.TRIALS,
    RunDir.RUN_MARKER,
    RunDir.REPORT,
    RunDir.BEHAVIOR,
    RunDir.BUDGETS,
    RunDir.SHARDS,
)
_TREES = (RunDir.LOGS, RunDir.RECORDS)


def make_private(run: RunDir) -> None:
    """Make what a run wrote readable by this uid only: logs/ and records/ (folders 0700, files 0600)
    and the run's own files (0600). The run directory itself is the caller's: only one this run created
    (or an empty one) is made 0700, never a folder of other things such as --out /tmp."""
    for name in _TREES:
        tree = run.path / name
        if tree.is_symlink():  # os.walk would follow it out of the run
            continue
        _chmod(tree, PRIVATE_DIR_MODE)
        for root, folders, files in os.walk(tree):
            for folder in folders:
                _chmod(Path(root, folder), PRIVATE_DIR_MODE)
            for file in files:
                _chmod(Path(root, file), PRIVATE_FILE_MODE)
    for name in _FILES:
        _chmod(run.path / name, PRIVATE_FILE_MODE)


def _chmod(path: Path, mode: int) -> None:
    """chmod `path` unless it is a link (chmod follows links, out of the run) or absent."""
    if not path.is_symlink():
        with suppress(FileNotFoundError):
            path.chmod(mode)
