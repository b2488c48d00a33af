"""Is a benchmark tree the pinned upstream commit? Each file checked against that commit's manifest.

A run reads upstream's graders, prompts, task data and mock services from a tree on disk (`--data-dir`, the
cache, or a download), so an edited grader would still be recorded as "official". The manifest of the
pinned commit (`manifests/OWNER+NAME@COMMIT.tsv`: git blob id and path per file, written by
`scripts/upstream_manifest.py` from `git ls-tree`) says what each file must hold. Git's blob id is the
hash because it is what the commit itself records: a clone, an archive and a copy all hash the same.

A tree may be a subfolder of the repository (a benchmark's data folder): where it sits in the repository
is found from its files (`TreeCheck.prefix`). Files of a task (`task_of`: a pattern with a `task` group over
repository paths; a copy's quoted file names are read as their names) count only when that task runs, so
one edited task taints the runs that run it.

Python's bytecode caches (`__pycache__/`) are left out: a checkout in which upstream's code has run holds
them, and forge-eval writes none when it runs that code. A cache planted to match a source's timestamp
is therefore not seen by the check (a known limit).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from forge_eval._errors import ForgeError

MANIFESTS = Path(__file__).parent / "manifests"
#: Added files that count as a change outside any task's folder: what an interpreter may load or run.
CODE_SUFFIXES = (".py", ".pyc", ".pth", ".so", ".sh", ".js", ".mjs", ".cjs", ".ts")


def manifest_path(repo: str, commit: str) -> Path:
    """Where the manifest of `repo` at the full commit `commit` is kept."""
    return MANIFESTS / f"{repo.replace('/', '+')}@{commit}.tsv"


@cache
def manifest(repo: str, revision: str) -> dict[str, str]:
    """Path -> git blob id of every file of `repo` at `revision` (a full or abbreviated commit)."""
    found = sorted(MANIFESTS.glob(f"{repo.replace('/', '+')}@{revision}*.tsv"))
    if len(found) != 1:
        raise ForgeError(
            f"no manifest of {repo}@{revision} in {MANIFESTS} ({len(found)} match)",
            hint=f"write it from a clone: python scripts/upstream_manifest.py CLONE {repo} {revision}",
        )
    rows = (line.split("\t", 1) for line in found[0].read_text(encoding="utf-8").splitlines() if line)
    return {path: blob for blob, path in rows}


def blob_id(path: Path) -> str:
    """The git blob id of a file (`git hash-object`)."""
    data = path.read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


@dataclass(frozen=True)
class TreeCheck:
    """A tree on disk against its pinned commit.

    Attributes:
        repo: Upstream `owner/name`.
        commit: The pinned revision.
        folder: The tree that was checked.
        prefix: Where the folder sits in the repository ("" = the repository's root).
        modified: Repository paths present with other content than the pinned commit's.
        added: Repository paths present that the pinned commit does not have.
        missing: Repository paths under `prefix` that the folder lacks (a partial copy).
        task_of: Pattern over repository paths whose `task` group names the task a file belongs to.
    """

    repo: str
    commit: str
    folder: Path
    prefix: str
    modified: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    task_of: str | None = field(default=None, repr=False)

    def changed(self, task_ids: Iterable[str] | None = None) -> list[str]:
        """Changed paths (modified or added) that a run of `task_ids` reads: those of the tasks (of every
        task when `task_ids` is None), and of the files of no task every modified one and every added one
        that code could import or run (an added note or listing changes nothing the run reads)."""
        wanted = None if task_ids is None else set(map(str, task_ids))
        pattern = re.compile(self.task_of) if self.task_of else None
        out = []
        for path in sorted({*self.modified, *self.added}):
            owner = pattern.match(path.lstrip('"')) if pattern else None
            if owner is not None:
                if wanted is None or owner.group("task") in wanted:
                    out.append(path)
            elif path in self.modified or path.endswith(CODE_SUFFIXES):
                out.append(path)
        return out

    def describe(self, paths: list[str], most: int = 5) -> str:
        listed = ", ".join(f"{p} ({'added' if p in self.added else 'modified'})" for p in paths[:most])
        more = f" and {len(paths) - most} more" if len(paths) > most else ""
        return listed + more


def _prefix(files: list[str], pinned: dict[str, str]) -> str:
    """Where a folder holding `files` (relative paths) sits in the repository: the prefix under which
    most of them are found in the manifest ("" when none is)."""
    by_name: dict[str, list[str]] = {}
    for path in pinned:
        by_name.setdefault(path.rsplit("/", 1)[-1], []).append(path)
    votes: Counter[str] = Counter()
    for relative in files:
        for path in by_name.get(relative.rsplit("/", 1)[-1], ()):
            if path == relative or path.endswith("/" + relative):
                votes[path[: len(path) - len(relative)]] += 1
    return votes.most_common(1)[0][0] if votes else ""


@cache
def _check(folder: Path, repo: str, revision: str, task_of: str | None) -> TreeCheck:
    pinned = manifest(repo, revision)
    files = sorted(
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.relative_to(folder).parts
    )
    prefix = _prefix(files, pinned)
    modified, added = [], []
    for relative in files:
        expected = pinned.get(prefix + relative)
        if expected is None:
            added.append(prefix + relative)
        elif blob_id(folder / relative) != expected:
            modified.append(prefix + relative)
    present = {prefix + relative for relative in files}
    missing = [p for p in pinned if p.startswith(prefix) and p not in present]
    return TreeCheck(repo, revision, folder, prefix, tuple(modified), tuple(added), tuple(missing), task_of)


def check_tree(folder: Path, repo: str, revision: str, task_of: str | None = None) -> TreeCheck:
    """`folder` against `repo` at `revision`, hashed once per process (a run looks its trees up often)."""
    check = _check(folder.resolve(), repo, revision, task_of)
    _LEDGER.setdefault(check.folder, check)
    return check


#: The trees checked in this process, by folder; `trees_read` scopes it to a block.
_LEDGER: dict[Path, TreeCheck] = {}


@contextmanager
def trees_read() -> Iterator[list[TreeCheck]]:
    """The upstream trees checked inside the block (a run's selection locates every tree it reads)."""
    before = dict(_LEDGER)
    _LEDGER.clear()
    seen: list[TreeCheck] = []
    try:
        yield seen
    finally:
        seen.extend(_LEDGER.values())
        _LEDGER.clear()
        _LEDGER.update(before)
