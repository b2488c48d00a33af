"""Who the browser runs as and what it sees: an unprivileged uid, Chromium's own sandbox on, and offline
the project's sandbox around it all.

The model drives the browser (URLs, clicks, the pages' JavaScript), so a renderer exploit must not land
in a root process with Chromium's sandbox off (Playwright's default as root, where Chromium refuses its
sandbox). Each browser session gets a uid/gid of its own when run as root (`forge_eval.sandbox`: no host
account, no groups, no capabilities, `no_new_privs`, from `FORGE_SANDBOX_UIDS`), or runs as the user
forge-eval runs as. Playwright launches a small wrapper written at run time instead of Chromium, and
Chromium keeps Playwright's pipe (fds 3 and 4) across the wrapper's exec:

- offline (weblab, local clones): the wrapper runs Chromium in the project's bubblewrap sandbox
  (`sandboxed_command`): read-only system, its own home as the only writable path (downloads land there),
  a private /tmp (Playwright's profile folder is made there), its own PID and network namespaces (no
  network at all: the context's router serves every page from the driver's side), no host file else;
- online (the live web): Chromium needs the host's loopback for its episode's egress gate (a port per
  episode, known only after launch), so the wrapper hands it Playwright's profile folder and drops to the
  uid with `setpriv`; it reads what any account may read, and no root-only file.

Either way Chromium then starts its own sandbox (namespaces and seccomp for every renderer; it needs
unprivileged user namespaces), and its environment is built from nothing (no launcher variable, no API
key). For hosts without user namespaces, `FORGE_BROWSER_NO_SANDBOX=1` turns Chromium's own sandbox off
(and, for a user that is not root, bubblewrap, which needs them too), still unprivileged, with a warning.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import shutil
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forge_eval._errors import ForgeError
from forge_eval.benchmarks.web._config import BrowserUnavailableError
from forge_eval.sandbox import (
    SandboxedCommand,
    SandboxLimits,
    SandboxSpec,
    SandboxUser,
    sandbox_user,
    sandboxed_command,
)

log = logging.getLogger(__name__)

#: Set to 1 to launch Chromium without its own sandbox (it still runs as the unprivileged uid).
NO_SANDBOX_ENV = "FORGE_BROWSER_NO_SANDBOX"
#: How Chromium (and bubblewrap, run by a user that is not root) say they cannot start their sandbox.
SANDBOX_FAILURES = ("No usable sandbox", "bwrap: ")
SANDBOX_HINT = (
    "Chromium's sandbox (and bubblewrap run by a user that is not root) needs unprivileged user namespaces "
    "(sysctl user.max_user_namespaces > 0; on "
    "Ubuntu 23.10+ also kernel.apparmor_restrict_unprivileged_userns=0; in a container, a seccomp "
    f"profile that allows them); where they cannot be had, {NO_SANDBOX_ENV}=1 runs the browser without "
    "its own sandbox (still as an unprivileged user)"
)
_PATH = "/usr/local/bin:/usr/bin:/bin"
#: The confined browser's caps (shared by the episodes of a session; threads count as pids).
LIMITS = SandboxLimits(cpus=float(os.cpu_count() or 2), memory_mb=4096, pids=4096)
FONT_CACHE = Path("/var/cache/fontconfig")


def chromium_sandbox() -> bool:
    """Whether Chromium's own sandbox is on (unless `FORGE_BROWSER_NO_SANDBOX` is set to 1/true/yes)."""
    return os.environ.get(NO_SANDBOX_ENV, "").strip().lower() not in ("1", "true", "yes")


@dataclass
class BrowserLaunch:
    """What `chromium.launch` gets for one browser, and what to undo once that browser has closed.

    Attributes:
        user: The uid the browser runs as (None: this process's own, non-root user).
        sandbox: Whether Chromium's own sandbox is on.
        confined: Whether the browser runs in the project's bubblewrap sandbox (offline).
        state: The browser's private folder (its home, downloads; the wrapper), removed by close().
    """

    user: SandboxUser | None
    sandbox: bool
    confined: bool
    state: Path
    executable: str | None
    env: dict[str, str]
    _exit: contextlib.AsyncExitStack = field(repr=False)

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

    async def close(self) -> None:
        """After the browser has exited: end what is left of its sandbox, free its uid, remove its files."""
        await self._exit.aclose()


async def prepare_launch(executable: str | None, managed: str, offline: bool) -> BrowserLaunch:
    """How to launch `executable` (None: Playwright's own browser, at `managed`) unprivileged, confined in
    the project's sandbox when `offline`.

    Raises:
        BrowserUnavailableError: bubblewrap or `setpriv` is missing, or the uid cannot run the binary.
    """
    sandbox = chromium_sandbox()
    if not sandbox:
        log.warning(
            "%s=1: Chromium runs without its own sandbox; a renderer exploit gets the browser user's view "
            "of this host",
            NO_SANDBOX_ENV,
        )
    exit_stack = contextlib.AsyncExitStack()
    try:
        user = exit_stack.enter_context(sandbox_user())
        state = Path(tempfile.mkdtemp(prefix="forge-browser-"))
        exit_stack.callback(shutil.rmtree, state, ignore_errors=True)
        state.chmod(0o711)  # the browser's uid passes through to its home, and reads nothing else here
        home = state / "home"
        (home / "downloads").mkdir(parents=True, mode=0o700)
        (home / "tmp").mkdir(mode=0o700)
        env = {"HOME": str(home), "TMPDIR": str(home / "tmp"), "PATH": _PATH, "LANG": "C.UTF-8"}
        if user is not None:
            for path in (home, home / "downloads", home / "tmp"):
                os.chown(path, user.uid, user.gid)
        browser = executable or managed
        confined = offline and (user is not None or sandbox)  # a user's bwrap needs namespaces too
        if confined:
            command = await _confined(home, user, browser)
            exit_stack.push_async_callback(command.close)
            executable = _write_wrapper(state, shlex.join(command.argv))
        elif user is not None:
            executable = _dropping_wrapper(state, user, browser)
        return BrowserLaunch(user, sandbox, confined, state, executable, env, exit_stack)
    except BaseException:
        await exit_stack.aclose()
        raise


async def _confined(home: Path, user: SandboxUser | None, browser: str) -> SandboxedCommand:
    """The command line that runs `browser` in the project's sandbox, `home` its only writable path."""
    binary = Path(browser).resolve()
    _check_reachable(binary, (binary.parent, binary))  # the sandbox makes the folders above it passable
    ro_binds = [FONT_CACHE] if FONT_CACHE.is_dir() else []
    if not binary.is_relative_to("/usr"):  # Playwright's own browser, say: its folder (libraries beside it)
        ro_binds.append(binary.parent)
    spec = SandboxSpec(
        argv=[str(binary)], workdir=home, env={"LANG": "C.UTF-8"}, ro_binds=ro_binds, limits=LIMITS, user=user
    )
    try:
        return await sandboxed_command(spec)
    except ForgeError as e:
        raise BrowserUnavailableError(f"cannot confine the browser: {e.message}", hint=e.hint) from None


def _dropping_wrapper(state: Path, user: SandboxUser, browser: str) -> str:
    """The wrapper that hands Playwright's profile folder (made root's, 0700) to `user`, then becomes
    `user` for good and runs `browser`."""
    binary = Path(browser).resolve()
    _check_reachable(binary, (*reversed(binary.parents), binary))
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        raise BrowserUnavailableError(
            "setpriv is not installed; it runs the browser as an unprivileged user (Debian: util-linux)",
            hint="run `bash scripts/setup.d/50-chromium.sh` as root",
        )
    chown = shlex.join([shutil.which("chown") or "chown", f"{user.uid}:{user.gid}", "--"])
    handover = (
        f'for arg; do case $arg in --user-data-dir=*) {chown} "${{arg#--user-data-dir=}}" || exit 125;; '
        "esac; done"
    )
    return _write_wrapper(state, handover, shlex.join([*user.setpriv(setpriv), browser]))


def _write_wrapper(state: Path, *lines: str) -> str:
    """Write the script Playwright launches in place of the browser (root's, 0700): `lines`, the last of
    which is the command that gets Playwright's arguments."""
    script = state / "launch.sh"
    script.write_text("\n".join(["#!/bin/sh", *lines[:-1], f'exec {lines[-1]} "$@"']) + "\n")
    script.chmod(0o700)
    return str(script)


def _check_reachable(binary: Path, paths: Sequence[Path]) -> None:
    """A clear error when a uid with no groups cannot pass through `paths` to run `binary` (Playwright's
    own browser under root's 0700 home, for one), instead of a launch that fails with "permission denied"."""
    for path in paths:
        mode = path.stat().st_mode
        if not mode & stat.S_IXOTH:
            raise BrowserUnavailableError(
                f"the browser {binary} cannot be run by an unprivileged user: {path} is not "
                f"{'executable' if path == binary else 'searchable'} by others",
                hint="install Debian's chromium-headless-shell (scripts/setup.d/50-chromium.sh), or keep "
                "Playwright's browsers where any user may read them (PLAYWRIGHT_BROWSERS_PATH=/opt/pw)",
            )
