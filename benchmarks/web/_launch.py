"""Who the browser runs as: an unprivileged uid of its own, with Chromium's own sandbox on.

The model drives the browser (URLs, clicks, the pages' JavaScript), so a renderer exploit must not land
in a root process with Chromium's sandbox off (Playwright's default as root, where Chromium refuses its
sandbox). Run as root, each browser session takes a sandbox uid (`forge_eval.sandbox.sandbox_user`: a
uid/gid no host account has, from `FORGE_SANDBOX_UIDS`), and Playwright launches a small wrapper written
at run time instead of Chromium: it gives the profile folder Playwright made (root's, 0700) to that uid,
then `setpriv` drops to it for good (no groups, no capabilities, `no_new_privs`) and execs Chromium, which
keeps Playwright's pipe (fds 3 and 4) across the exec. Chromium then starts its own sandbox (namespaces
and seccomp for every renderer; it needs unprivileged user namespaces). The uid reads only what any
account may read: root-only host files stay closed to the browser, and so does this checkout's `runs/`.
Run as another user there is nobody to drop to: the browser runs as that user, its sandbox on.

The browser's environment is built from nothing (a private HOME and TMPDIR, PATH, LANG): none of the
launcher's variables (API keys) reach it. `FORGE_BROWSER_NO_SANDBOX=1` turns Chromium's own sandbox off
(still as the unprivileged uid), with a warning, for hosts without user namespaces.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forge_eval.benchmarks.web._config import BrowserUnavailableError
from forge_eval.sandbox import SandboxUser, sandbox_user

log = logging.getLogger(__name__)

#: Set to 1 to launch Chromium without its own sandbox (it still runs as the unprivileged uid).
NO_SANDBOX_ENV = "FORGE_BROWSER_NO_SANDBOX"
#: How Chromium says that it cannot start its sandbox (no user namespaces here).
NO_USABLE_SANDBOX = "No usable sandbox"
SANDBOX_HINT = (
    "Chromium's sandbox needs unprivileged user namespaces (sysctl user.max_user_namespaces > 0; on "
    "Ubuntu 23.10+ also kernel.apparmor_restrict_unprivileged_userns=0; in a container, a seccomp "
    f"profile that allows them); where they cannot be had, {NO_SANDBOX_ENV}=1 runs the browser without "
    "its own sandbox (still as an unprivileged user)"
)
_PATH = "/usr/local/bin:/usr/bin:/bin"


def chromium_sandbox() -> bool:
    """Whether Chromium's own sandbox is on (unless `FORGE_BROWSER_NO_SANDBOX` is set to 1/true/yes)."""
    return os.environ.get(NO_SANDBOX_ENV, "").strip().lower() not in ("1", "true", "yes")


@dataclass
class BrowserLaunch:
    """What `chromium.launch` gets for one browser, and what to undo once that browser has closed.

    Attributes:
        user: The uid the browser runs as (None: this process's own, non-root user).
        sandbox: Whether Chromium's own sandbox is on.
        state: The browser's private folder (its HOME, TMPDIR, downloads; the wrapper), removed by close().
    """

    user: SandboxUser | None
    sandbox: bool
    state: Path
    executable: str | None
    env: dict[str, str]
    _exit: contextlib.ExitStack = field(repr=False)

    @property
    def home(self) -> Path:
        return self.state / "home"

    def options(self) -> dict[str, Any]:
        """Keyword arguments of `BrowserType.launch` (with the caller's args and headless)."""
        return {
            "executable_path": self.executable,
            "env": self.env,
            "downloads_path": str(self.home / "downloads"),
            "chromium_sandbox": self.sandbox,
        }

    def close(self) -> None:
        shutil.rmtree(self.state, ignore_errors=True)
        self._exit.close()


def prepare_launch(executable: str | None, managed: str) -> BrowserLaunch:
    """How to launch `executable` (None: Playwright's own browser, at `managed`) as an unprivileged user.

    Raises:
        BrowserUnavailableError: `setpriv` is missing, or the unprivileged uid cannot run the binary.
    """
    sandbox = chromium_sandbox()
    if not sandbox:
        log.warning(
            "%s=1: Chromium runs without its own sandbox; a renderer exploit gets the browser user's view "
            "of this host",
            NO_SANDBOX_ENV,
        )
    exit_stack = contextlib.ExitStack()
    user = exit_stack.enter_context(sandbox_user())
    state = Path(tempfile.mkdtemp(prefix="forge-browser-"))
    try:
        state.chmod(0o711)  # the browser's uid passes through to its home, and reads nothing else here
        home = state / "home"
        (home / "downloads").mkdir(parents=True, mode=0o700)
        (home / "tmp").mkdir(mode=0o700)
        env = {"HOME": str(home), "TMPDIR": str(home / "tmp"), "PATH": _PATH, "LANG": "C.UTF-8"}
        if user is not None:
            for path in (home, home / "downloads", home / "tmp"):
                os.chown(path, user.uid, user.gid)
            executable = _wrapper(state, user, executable or managed)
        return BrowserLaunch(user, sandbox, state, executable, env, exit_stack)
    except BaseException:
        shutil.rmtree(state, ignore_errors=True)
        exit_stack.close()
        raise


def _wrapper(state: Path, user: SandboxUser, browser: str) -> str:
    """Write the script Playwright launches in place of `browser` (root's, 0700): it hands the profile
    folder to `user`, then becomes `user` for good and execs `browser` with Playwright's arguments."""
    _check_reachable(Path(browser))
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        raise BrowserUnavailableError(
            "setpriv is not installed; it runs the browser as an unprivileged user (Debian: util-linux)",
            hint="run `bash scripts/setup.d/50-chromium.sh` as root",
        )
    chown = shutil.which("chown") or "chown"
    owner = shlex.quote(f"{user.uid}:{user.gid}")
    drop = shlex.join([*user.setpriv(setpriv), browser])
    script = state / "launch.sh"
    script.write_text(
        "#!/bin/sh\n"
        "for arg; do case $arg in --user-data-dir=*) "
        f'{shlex.quote(chown)} {owner} -- "${{arg#--user-data-dir=}}" || exit 125;; esac; done\n'
        f'exec {drop} "$@"\n'
    )
    script.chmod(0o700)
    return str(script)


def _check_reachable(binary: Path) -> None:
    """A clear error when a uid with no groups cannot run `binary` (Playwright's own browser under root's
    0700 home, for one), instead of a launch that fails with a bare "permission denied"."""
    binary = binary.resolve()
    for path in (*reversed(binary.parents), binary):
        mode = path.stat().st_mode
        if not mode & stat.S_IXOTH:
            raise BrowserUnavailableError(
                f"the browser {binary} cannot be run by an unprivileged user: {path} is not "
                f"{'executable' if path == binary else 'searchable'} by others",
                hint="install Debian's chromium-headless-shell (scripts/setup.d/50-chromium.sh), or keep "
                "Playwright's browsers where any user may read them (PLAYWRIGHT_BROWSERS_PATH=/opt/pw)",
            )
