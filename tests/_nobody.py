"""Another host user, for the tests of what such a user can reach: uid and gid 65534 (nobody), no groups."""

import subprocess

#: The prefix that runs a command as nobody (root only).
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]


def as_nobody(*argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run `argv` as nobody to its end, from /, its output captured as text."""
    return subprocess.run(
        [*NOBODY, *argv], capture_output=True, text=True, errors="replace", timeout=timeout, cwd="/"
    )
