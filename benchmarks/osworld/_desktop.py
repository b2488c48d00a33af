"""A desktop on the host: an Xvfb display, a throw-away unprivileged user, its session bus and AT-SPI bus.

OSWorld's tasks assume Ubuntu's `user` with home `/home/user` and a GNOME session. Here the desktop is an
Xvfb display with openbox, and every app, command and file operation runs as a user created for this
desktop only (VLC refuses root; checkers read files under /home/user). `stop()` kills every process of that
user, the display and the session folder, and deletes the user, so nothing outlives the episode.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from forge_eval._errors import ForgeError

#: OSWorld's VM user and home; task configs and checkers name these paths literally.
HOME = "/home/user"
#: The user's password in OSWorld's VM (tasks type it for sudo prompts).
PASSWORD = "password"
#: Programs the local desktop needs, with the Debian package that ships each.
REQUIRED_PROGRAMS = {
    "Xvfb": "xvfb",
    "xdotool": "xdotool",
    "openbox": "openbox",
    "wmctrl": "wmctrl",
    "dbus-daemon": "dbus",
    "useradd": "passwd",
}
AT_SPI_LAUNCHER = "/usr/libexec/at-spi-bus-launcher"
SYSTEM_PYTHON = "/usr/bin/python3"
_USER_PREFIX = "forge-osw-"


def missing_programs() -> list[str]:
    """The desktop programs not installed here, as 'program (Debian package)'."""
    return [
        f"{prog} (apt package {pkg})" for prog, pkg in REQUIRED_PROGRAMS.items() if not shutil.which(prog)
    ]


@dataclass
class LocalDesktop:
    """One Xvfb desktop run by a temporary user whose home is /home/user.

    Args:
        width: Screen width in pixels (OSWorld: 1920).
        height: Screen height in pixels (OSWorld: 1080).
        site_dir: Extra Python packages (pyautogui) for the desktop's python, put on its PYTHONPATH.
        sandbox: Run every desktop process inside bubblewrap with the network unshared.
    """

    width: int = 1920
    height: int = 1080
    site_dir: Path | None = None
    sandbox: bool = False
    display: str = ""
    user: str = ""
    uid: int = -1
    gid: int = -1
    _tmp: Path | None = None
    _xvfb: subprocess.Popen[bytes] | None = None
    _children: list[subprocess.Popen[bytes]] = field(default_factory=list)
    _env: dict[str, str] = field(default_factory=dict)

    # -- lifecycle -------------------------------------------------------------------------------------
    def start(self) -> LocalDesktop:
        if os.geteuid() != 0:
            raise ForgeError(
                "the OSWorld local provider must run as root: it creates a throw-away desktop user whose "
                "home is /home/user (OSWorld's paths) and deletes it afterwards",
                hint="run forge-eval as root (e.g. in a CI VM or container), or use --provider podman/docker",
            )
        missing = missing_programs()
        if missing:
            raise ForgeError(
                f"the OSWorld local desktop needs programs that are not installed: {', '.join(missing)}",
                hint="run scripts/setup.d/60-desktop.sh (Debian/Ubuntu, as root)",
            )
        if os.path.exists(HOME):
            raise ForgeError(
                f"{HOME} already exists; the local provider makes it the desktop user's home and deletes it "
                "afterwards, so it refuses to touch an existing one",
                hint=f"remove or move {HOME} (or a desktop left by a killed run: userdel -r <its user>)",
            )
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        self._tmp = Path(tempfile.mkdtemp(prefix="forge-osworld-"))
        os.chmod(self._tmp, 0o755)
        self.user = _USER_PREFIX + secrets.token_hex(4)
        subprocess.run(
            [
                "useradd",
                "--create-home",
                "--home-dir",
                HOME,
                "--shell",
                "/bin/bash",
                "--user-group",
                self.user,
            ],
            check=True,
            capture_output=True,
        )
        subprocess.run(
            ["chpasswd"], input=f"{self.user}:{PASSWORD}".encode(), check=True, capture_output=True
        )
        entry = pwd.getpwnam(self.user)
        self.uid, self.gid = entry.pw_uid, entry.pw_gid
        runtime = self._tmp / "run"
        runtime.mkdir(mode=0o700)
        os.chown(runtime, self.uid, self.gid)
        for sub in ("Desktop", "Documents", "Downloads", "Pictures", "Music", "Videos"):
            self._make_user_dir(Path(HOME) / sub)

        self.display = f":{_free_display()}"
        self._xvfb = subprocess.Popen(
            [
                "Xvfb",
                self.display,
                "-screen",
                "0",
                f"{self.width}x{self.height}x24",
                "-nolisten",
                "tcp",
                "-ac",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        bus = runtime / "bus"
        self._env = {
            "DISPLAY": self.display,
            "HOME": HOME,
            "USER": "user",
            "LOGNAME": "user",
            "SHELL": "/bin/bash",
            "PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
            "LANG": "C.UTF-8",
            "XDG_RUNTIME_DIR": str(runtime),
            "DBUS_SESSION_BUS_ADDRESS": f"unix:path={bus}",
            # LibreOffice exposes its widgets to AT-SPI only through the GTK3 VCL plugin.
            "SAL_USE_VCLPLUGIN": "gtk3",
            "GTK_MODULES": "gail:atk-bridge",
            "NO_AT_BRIDGE": "0",
            # Qt apps (VLC) expose their widgets only when asked to.
            "QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1",
            "QT_ACCESSIBILITY": "1",
            "PYTHONPATH": self._copy_site(),
        }
        self._wait_for_display()
        self.popen(["dbus-daemon", "--session", "--nofork", "--nopidfile", f"--address=unix:path={bus}"])
        _wait_for(lambda: bus.exists(), 10, "the desktop's session bus")
        # The AT-SPI bus must be up and enabled before any app starts, or apps expose no tree.
        if os.path.exists(AT_SPI_LAUNCHER):
            self.popen([AT_SPI_LAUNCHER, "--launch-immediately"])
            self.run(
                [
                    "dbus-send",
                    "--session",
                    "--type=method_call",
                    "--dest=org.a11y.Bus",
                    "/org/a11y/bus",
                    "org.freedesktop.DBus.Properties.Set",
                    "string:org.a11y.Status",
                    "string:IsEnabled",
                    "variant:boolean:true",
                ],
                timeout=10,
            )
        self.popen(["openbox"])

    def _copy_site(self) -> str:
        """A readable copy of `site_dir` for the desktop user (the user cache may be private)."""
        if self.site_dir is None or not self.site_dir.is_dir():
            return ""
        assert self._tmp is not None
        target = self._tmp / "site"
        shutil.copytree(self.site_dir, target)
        for folder, _dirs, files in os.walk(target):
            os.chmod(folder, 0o755)
            for name in files:
                os.chmod(os.path.join(folder, name), 0o644)
        return str(target)

    def _make_user_dir(self, path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)
        os.chown(path, self.uid, self.gid)

    def _wait_for_display(self) -> None:
        def ready() -> bool:
            if self._xvfb is not None and self._xvfb.poll() is not None:
                raise ForgeError(
                    f"Xvfb exited at start on display {self.display} (code {self._xvfb.returncode})"
                )
            probe = subprocess.run(["xdpyinfo", "-display", self.display], capture_output=True)
            return probe.returncode == 0

        _wait_for(ready, 15, f"Xvfb on {self.display}")

    def stop(self) -> None:
        """Kill the user's processes and the display, delete the user, its home and the session folder."""
        if self.uid >= 0:
            _kill_uid(self.uid)
        for child in self._children:  # reap them, or they linger as zombies
            child.wait()
        self._children.clear()
        if self._xvfb is not None:
            _terminate(self._xvfb)
            self._xvfb = None
        if self.display:
            number = self.display.lstrip(":")
            for leftover in (f"/tmp/.X{number}-lock", f"/tmp/.X11-unix/X{number}"):
                Path(leftover).unlink(missing_ok=True)
        if self.user:
            subprocess.run(["userdel", "--remove", "--force", self.user], capture_output=True)
            self.user = ""
            self.uid = -1
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
        # userdel only removes a home it created with the user; be sure no /home/user is left.
        if os.path.isdir(HOME) and not os.path.islink(HOME):
            shutil.rmtree(HOME, ignore_errors=True)

    def __enter__(self) -> LocalDesktop:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- running things as the desktop user ---------------------------------------------------------------
    @property
    def env(self) -> Mapping[str, str]:
        return self._env

    def argv(self, command: Sequence[str] | str, shell: bool = False) -> list[str]:
        """The argv that runs `command` as the desktop user (inside bubblewrap when sandboxed)."""
        if shell:
            argv = ["/bin/bash", "-c", command if isinstance(command, str) else " ".join(command)]
        else:
            argv = [command] if isinstance(command, str) else list(command)
            # OSWorld's VM has `python` = Python 3 with pyautogui; Debian only has python3.
            if argv and argv[0] == "python":
                argv[0] = SYSTEM_PYTHON
        if self.sandbox:
            argv = [
                "bwrap",
                "--dev-bind",
                "/",
                "/",
                "--unshare-net",
                "--unshare-ipc",
                "--die-with-parent",
                "--",
                *argv,
            ]
        return argv

    def _kwargs(self, cwd: str | None) -> dict[str, object]:
        return {
            "user": self.uid,
            "group": self.gid,
            "extra_groups": [],
            "env": dict(self._env),
            "cwd": cwd or HOME,
        }

    def popen(
        self, command: Sequence[str] | str, shell: bool = False, cwd: str | None = None
    ) -> subprocess.Popen[bytes]:
        """Start `command` in the background as the desktop user (its own session, output discarded)."""
        child = subprocess.Popen(
            self.argv(command, shell),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            **self._kwargs(cwd),  # type: ignore[arg-type]
        )
        self._children = [c for c in self._children if c.poll() is None] + [child]
        return child

    def run(
        self,
        command: Sequence[str] | str,
        shell: bool = False,
        cwd: str | None = None,
        timeout: float | None = 120,
        input: bytes | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        """Run `command` as the desktop user and wait for it; a timeout returns code 124, not an exception."""
        try:
            return subprocess.run(
                self.argv(command, shell),
                input=input,
                capture_output=True,
                timeout=timeout,
                **self._kwargs(cwd),  # type: ignore[arg-type]
            )
        except subprocess.TimeoutExpired as exc:
            return subprocess.CompletedProcess(
                exc.cmd, 124, exc.stdout or b"", (exc.stderr or b"") + b"timed out"
            )

    def write_file(self, path: str, data: bytes) -> None:
        """Write `data` at `path`, creating folders, owned by the desktop user."""
        target = Path(path)
        parents = [p for p in reversed(target.parents) if not p.exists()]
        target.parent.mkdir(parents=True, exist_ok=True)
        for made in parents:
            os.chown(made, self.uid, self.gid)
        target.write_bytes(data)
        os.chown(target, self.uid, self.gid)

    def window_titles(self) -> list[str]:
        """Titles of the desktop's top-level windows."""
        listing = self.run(["wmctrl", "-l"], timeout=10).stdout.decode(errors="replace")
        return [line.split(None, 3)[3] for line in listing.splitlines() if len(line.split(None, 3)) == 4]

    def wait_for_window(self, title_part: str, timeout: float) -> bool:
        """Wait until a window whose title contains `title_part` is shown; False on timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(title_part in title for title in self.window_titles()):
                return True
            time.sleep(0.5)
        return False

    def processes(self) -> list[int]:
        """Pids of the desktop user's processes."""
        return _pids_of(self.uid) if self.uid >= 0 else []


def _free_display() -> int:
    for number in range(90, 400):
        if not os.path.exists(f"/tmp/.X{number}-lock") and not os.path.exists(f"/tmp/.X11-unix/X{number}"):
            return number
    raise ForgeError("no free X display number between :90 and :399", hint="remove stale /tmp/.X*-lock files")


def _wait_for(ready: object, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ready():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise ForgeError(f"{what} did not come up within {seconds:.0f} s")


def _pids_of(uid: int) -> list[int]:
    """Live (not zombie) processes owned by `uid`."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid != uid:
                    continue
                state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except (FileNotFoundError, ProcessLookupError, IndexError):
                continue
            if state != "Z":
                pids.append(int(entry))
    return pids


def _kill_uid(uid: int) -> None:
    """SIGTERM then SIGKILL every process owned by `uid` (only the desktop's own user)."""
    for sig, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 2.0)):
        pids = _pids_of(uid)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and _pids_of(uid):
            time.sleep(0.05)


def _terminate(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)
