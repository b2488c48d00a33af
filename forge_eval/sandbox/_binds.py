"""What a sandbox may see of this Python and of forge_eval: the runtime a harness imports, no grader input.

A sandboxed program imports forge_eval's runtime (harnesses, proxy, models, sandbox: the import contracts
keep them below the rest) and nothing else of it. The sub-packages above (`benchmarks` with every
benchmark's references, checks, oracles, judges and task data; `training`, `analysis`, `reports`) are
never shown: an editable install keeps them in folders beside forge_eval/ (setup.py's package-dir
mapping), which are not bound; a regular install keeps them inside the package folder, within the
virtualenv, so the sandbox lays an empty folder over each (`hidden_folders()`). The checkout root is never
bound either: it holds runs/ (the proxy's `.secret`, `.admin-key`, records, control sockets), .git, tests/.
"""

import functools
import importlib.util
import sys
from pathlib import Path

import forge_eval

#: forge_eval's sub-packages that no sandboxed program imports (see the module doc).
NOT_RUNTIME = ("benchmarks", "training", "analysis", "reports")


@functools.cache
def hidden_folders() -> tuple[Path, ...]:
    """The folders of forge_eval's non-runtime sub-packages, wherever this install keeps them: no sandbox
    shows them, even under a bound parent."""
    folders: list[Path] = []
    for name in NOT_RUNTIME:
        spec = importlib.util.find_spec(f"forge_eval.{name}")
        locations = spec.submodule_search_locations if spec is not None else None
        folders += [Path(p).resolve() for p in locations or ()]
    return tuple(folders)


def hidden_under(source: Path, dest: Path) -> list[Path]:
    """Where a sandbox that shows host folder `source` at `dest` lays an empty folder: over each of
    `hidden_folders()` inside `source`."""
    return [dest / folder.relative_to(source) for folder in hidden_folders() if folder.is_relative_to(source)]


def python_ro_binds() -> list[Path]:
    """Host paths a sandbox needs to run this Python with forge_eval's runtime importable: the virtualenv,
    its base interpreter, and forge_eval's own folder (never the checkout root nor `hidden_folders()`)."""
    paths = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}
    package = Path(forge_eval.__file__).resolve().parent
    if not any(package.is_relative_to(p) for p in paths):  # an editable install: the checkout's copy
        paths.add(package)
    return sorted(paths)
