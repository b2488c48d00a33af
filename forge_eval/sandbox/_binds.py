"""What a sandbox must see to run this Python and import forge_eval, and nothing of the checkout besides.

An editable install imports `forge_eval` from the checkout, and its sub-packages from the folders setup.py's
package-dir mapping names (benchmarks/, training/, ...). The checkout root itself is never bound: it holds
runs/ (the proxy's `.secret`, `.admin-key`, records, control sockets), .git and whatever else a user keeps
there.
"""

import functools
import importlib.util
import sys
from pathlib import Path

import forge_eval


@functools.cache
def package_folders() -> tuple[Path, ...]:
    """The folders forge_eval's code is imported from: its own, and each folder beside it that imports as
    `forge_eval.<name>` (an editable install's package-dir mapping). Empty for a regular install (the
    package is inside the virtualenv)."""
    own = Path(forge_eval.__file__).resolve().parent
    if own.is_relative_to(Path(sys.prefix).resolve()):
        return ()
    folders = [own]
    for child in sorted(own.parent.iterdir()):
        if child == own or not (child / "__init__.py").is_file() or not child.name.isidentifier():
            continue
        spec = importlib.util.find_spec(f"forge_eval.{child.name}")
        locations = spec.submodule_search_locations if spec is not None else None
        if locations and any(Path(p).resolve() == child.resolve() for p in locations):
            folders.append(child.resolve())
    return tuple(folders)


def python_ro_binds() -> list[Path]:
    """Host paths a sandbox needs to run this Python with forge_eval importable: the virtualenv, its
    base interpreter, and the package folders of an editable install (never the checkout root)."""
    paths = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(), *package_folders()}
    return sorted(paths)
