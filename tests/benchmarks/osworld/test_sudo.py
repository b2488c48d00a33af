"""The local desktop's `sudo` (`_inside/sudo.py`) as an unprivileged user: OSWorld's password gives root of
a user namespace of the caller's own uid, a wrong one or another target user gives nothing.

Run as nobody, as the desktop's uid would run it (the desktop's own end-to-end checks are in test_oracles,
`e0df059f`, and test_security)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._nobody import NOBODY

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="runs the command as nobody, which needs root")


@pytest.fixture
def sudo() -> Iterator[Path]:
    """sudo.py in a folder of its own beside its password file, as in the desktop's tools folder (outside
    pytest's root-only temporary folder, so that nobody can read it)."""
    from forge_eval.benchmarks.osworld._desktop import PASSWORD
    from forge_eval.benchmarks.osworld._inside import INSIDE_DIR

    with tempfile.TemporaryDirectory(dir="/var/tmp", prefix="forge-sudo-") as folder:
        tools = Path(folder)
        tools.chmod(0o755)
        shutil.copy(INSIDE_DIR / "sudo.py", tools / "sudo.py")
        (tools / "password").write_text(PASSWORD + "\n")
        yield tools / "sudo.py"


def _run(sudo: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*NOBODY, "/usr/bin/python3", "-s", str(sudo), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=30,
        cwd="/",
        env={"PATH": "/usr/bin:/bin", "USER": "user"},
    )


def test_the_password_gives_root_inside_a_user_namespace_only(sudo: Path) -> None:
    done = _run(sudo, "-S", "sh", "-c", "id -u; cat /proc/self/uid_map; cat", stdin="password\nrest\n")
    assert done.returncode == 0, done.stderr
    uid, mapping, rest = done.stdout.splitlines()
    assert uid == "0" and mapping.split() == ["0", "65534", "1"]  # root here is nobody on the host
    assert rest == "rest"  # what follows the password line is the command's input
    assert "[sudo] password for user: " in done.stderr
    # that root cannot write what the host's root owns
    assert _run(sudo, "-S", "touch", "/etc/forge-sudo-probe", stdin="password\n").returncode != 0
    assert not Path("/etc/forge-sudo-probe").exists()


def test_wrong_password_other_users_and_bad_options_are_refused(sudo: Path) -> None:
    wrong = _run(sudo, "-S", "id", "-u", stdin="nope\n")
    assert wrong.returncode == 1 and "1 incorrect password attempt" in wrong.stderr, wrong.stderr
    assert "Sorry, try again." in wrong.stderr and wrong.stdout == ""
    thrice = _run(sudo, "-S", "-p", "", "id", stdin="a\nb\nc\n")
    assert thrice.returncode == 1 and "3 incorrect password attempts" in thrice.stderr
    other = _run(sudo, "-S", "-u", "charles", "id", stdin="password\n")
    assert other.returncode == 1 and "only root" in other.stderr
    bad = _run(sudo, "-Z", "id")
    assert bad.returncode == 1 and "invalid option -- 'Z'" in bad.stderr and "usage:" in bad.stderr
    no_terminal = _run(sudo, "id")
    assert no_terminal.returncode == 1 and "a terminal is required" in no_terminal.stderr
