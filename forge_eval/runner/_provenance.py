"""Provenance of a run: package versions and the git revision of the forge-eval source."""

import platform
import subprocess
from importlib import metadata
from pathlib import Path

_PACKAGES = ("forge-eval", "inspect-ai", "openai", "xllamacpp", "numpy", "scipy", "pandas")


def versions() -> dict[str, str]:
    """Versions of Python and the packages whose behaviour affects results."""
    found = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            found[name.replace("-", "_")] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def git_revision() -> str | None:
    """The forge-eval checkout's commit (with `-dirty` if it has uncommitted changes), if any."""
    root = Path(__file__).resolve().parents[2]
    try:
        rev = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
        if rev.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return rev.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
