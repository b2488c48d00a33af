"""The local desktop: a whole OSWorld desktop inside one sandbox, run by a throw-away unprivileged uid.

OSWorld runs the agent's actions and its in-VM server inside a VM. Here the VM is a sandbox of
`forge_eval.sandbox` (bubblewrap, as every sandbox of the project): Xvfb, the session and AT-SPI buses,
openbox, the apps, the agent's pyautogui code and the in-desktop server — upstream's own
`desktop_env/server/main.py`, copied from the run's OSWorld tree and started as its systemd unit does —
all run as one unprivileged uid of this desktop alone
(no host account, no host password, no capabilities, no_new_privs), in their own PID, network, IPC and
mount namespaces and cgroup. Its `sudo` (`_inside/sudo.py`, with OSWorld's password) gives root of a user
namespace that maps root to that same uid: root inside the box, nothing more on the host. The desktop
sees /usr and /etc read-only (the shadow files hidden; its passwd
names the uid `user`), its own /tmp and /run, a private home at /home/user (OSWorld's paths), the
read-only tools folder (`_inside`, the in-desktop server, the site packages, a `python` command), the fonts
— not /root, not this checkout or its runs, no host socket. Its network is its own loopback.

The grader reads the desktop through that server, and the agent's code runs as the server's own uid,
so the channel must be one the agent cannot take over (`forge_eval.sandbox.PrivatePort`): the host
reaches the server (and VLC's HTTP interface, Chrome's debugging port) by a loopback port that only this
run's process may use, each connection opened by this process into the desktop's network namespace, and
kept only while the server's port is still served by the socket it listened on at start (VLC's: by VLC;
Chrome's: by Chromium as `_chrome` launches it). The server runs
from the read-only tools folder, not dumpable (`_inside/serve.py`), and so does the session that holds
the desktop together: the agent's uid can neither ptrace them nor take their sockets, and a server it
kills or stops is a failed read, never a forged one. Nothing in the desktop can reach a host port: it has
no socket in the host's namespace to connect from. Online, one port of its loopback leads to the run's
egress gate, which connects to public addresses only (`_chrome`: Chromium's way to the live web).

A desktop leaves nothing: `stop()` ends every process of its sandbox and removes its state folder. A run
killed with SIGKILL takes its sandboxes with it (bubblewrap's --die-with-parent) and leaves its state
folders, which the next desktop's start removes (`clean_leftovers`), with any process of their uids and
the host users that earlier forge-eval versions created.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from forge_eval._errors import ForgeError
from forge_eval.benchmarks.osworld._chrome import (
    CHROME_DIR,
    DEBUG_PORT,
    PROXY_PORT,
    Egress,
    browser_env,
    run_processes,
    trusted_browser,
    write_launcher,
)
from forge_eval.benchmarks.osworld._client import HOME, DesktopClient
from forge_eval.benchmarks.osworld._data import data_root, online
from forge_eval.benchmarks.osworld._inside import INSIDE_DIR
from forge_eval.sandbox import (
    NetworkNamespace,
    PrivatePort,
    SandboxedCommand,
    SandboxLimits,
    SandboxSpec,
    sandbox_user,
    sandboxed_command,
    socket_holders,
)

logger = logging.getLogger(__name__)

#: Programs the local desktop needs, with the Debian package that ships each.
REQUIRED_PROGRAMS = {
    "bwrap": "bubblewrap",
    "setpriv": "util-linux",
    "Xvfb": "xvfb",
    "xdpyinfo": "x11-utils",
    "xdotool": "xdotool",
    "openbox": "openbox",
    "wmctrl": "wmctrl",
    "dbus-daemon": "dbus",
}
SYSTEM_PYTHON = "/usr/bin/python3"
#: Upstream's in-VM server in the OSWorld tree (its systemd unit `osworld_server.service` runs
#: `python /home/user/server/main.py` as `user`, from /home/user); here it runs from the read-only tools
#: folder, where the agent cannot rewrite it, and writes its screenshots to the desktop's own /tmp.
SERVER_DIR = Path("desktop_env/server")
SERVER_AT = "server"
SCREENSHOTS_AT = "/tmp/osworld-server-screenshots"
#: Per-desktop state folders (home, tools, log, owner); a killed run's stay until the next start.
STATE_ROOT = Path("/var/tmp/forge-osworld")
#: Ports inside the desktop: OSWorld's server port and VLC's HTTP interface (`vlc_port`).
SERVER_PORT = 5000
VLC_PORT = 8080
#: OSWorld's home folders.
USER_DIRS = ("Desktop", "Documents", "Downloads", "Pictures", "Music", "Videos")
#: A desktop's caps: a VM's worth (OSWorld's VMs: 4 GB); threads count as pids (LibreOffice, GIMP, VLC
#: start dozens each).
LIMITS = SandboxLimits(cpus=float(os.cpu_count() or 2), memory_mb=4096, pids=4096)
FONT_CACHE = Path("/var/cache/fontconfig")
START_TIMEOUT = 60
#: The session's runtime folder (the sandbox's /run is root's; its /tmp is its own), also seen at
#: /run/user/1000, where OSWorld's steps find the session bus (`DBUS_SESSION_BUS_ADDRESS=unix:path=
#: /run/user/1000/bus gnome-terminal`): the uid of its image's user.
RUNTIME_DIR = "/tmp/runtime-user"
UPSTREAM_RUNTIME_DIR = "/run/user/1000"
#: The desktop user's password (OSWorld's `client_password`), which the tasks' `sudo -S` steps give.
PASSWORD = "password"
#: Host users of forge-eval versions that created one per desktop (home /home/user, password "password").
_LEGACY_USER_PREFIX = "forge-osw-"


def missing_programs() -> list[str]:
    """The desktop programs not installed here, as 'program (Debian package)'."""
    return [
        f"{prog} (apt package {pkg})" for prog, pkg in REQUIRED_PROGRAMS.items() if not shutil.which(prog)
    ]


@dataclass
class LocalDesktop:
    """One desktop in its own sandbox; `client` reaches its in-desktop server.

    Args:
        width: Screen width in pixels (OSWorld: 1920).
        height: Screen height in pixels (OSWorld: 1080).
        site_dir: Python packages of the desktop's python3 (pyautogui and its helpers).
        tree: The OSWorld tree whose in-VM server runs in the desktop (default: the pinned tree).
    """

    width: int = 1920
    height: int = 1080
    site_dir: Path | None = None
    tree: Path | None = None
    uid: int = -1
    state: Path | None = None
    client: DesktopClient | None = None
    #: In-desktop port -> host port that reaches it (only from this run: `PrivatePort`).
    ports: dict[int, int] = field(default_factory=dict)
    _channels: list[PrivatePort] = field(default_factory=list)
    _network: NetworkNamespace | None = None
    #: The socket the server listened on at start: the only one the host's requests may reach.
    _server_socket: str | None = None
    #: Whether Chromium reaches the live web through the run's egress gate (None: when online).
    egress: bool | None = None
    _egress: Egress | None = None
    _command: SandboxedCommand | None = None
    _proc: subprocess.Popen[bytes] | None = None
    _keeper: threading.Thread | None = None
    _user: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)

    # -- lifecycle -------------------------------------------------------------------------------------
    def start(self) -> LocalDesktop:
        if os.geteuid() != 0:
            raise ForgeError(
                "the OSWorld local provider must run as root: each desktop runs as a throw-away uid of its "
                "own, which only root can switch to and clean up after",
                hint="run forge-eval as root (e.g. in a CI VM or container), or use --provider podman/docker",
            )
        missing = missing_programs()
        if missing:
            raise ForgeError(
                f"the OSWorld local desktop needs programs that are not installed: {', '.join(missing)}",
                hint="run scripts/setup.d/60-desktop.sh (Debian/Ubuntu, as root)",
            )
        return self._start_clean()

    def _start_clean(self) -> Self:
        """Clear a killed run's leftovers, then start; a start that fails stops what it started."""
        for removed in self._leftovers():
            logger.warning("removed the leftovers of a killed OSWorld run: %s", removed)
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _leftovers(self) -> list[str]:
        return clean_leftovers()

    def _start(self) -> None:
        user = self._user.enter_context(sandbox_user())
        assert user is not None  # we are root
        self.uid = user.uid
        self.state = _claim(self.uid)
        home = self.state / "home"
        home.mkdir()
        for sub in USER_DIRS:
            (home / sub).mkdir()
        if self.egress is None:
            self.egress = online()
        if self.egress:
            self._egress = Egress()
        tools = self._write_tools()
        session = [SYSTEM_PYTHON, "-s", str(tools / "session.py"), f"--screen={self.width}x{self.height}"]
        # upstream's server, unchanged: `app.run(debug=True, host="0.0.0.0")` on Flask's port 5000, which
        # in the sandbox's own network namespace is its loopback alone; `-s`: no module from the home
        server = [SYSTEM_PYTHON, "-s", str(tools / "serve.py"), str(tools / SERVER_AT / "main.py")]
        spec = SandboxSpec(
            argv=[*session, "--", *server],
            workdir=home,
            workdir_at=Path(HOME),
            env=self._environment(tools),
            ro_binds=[tools, *([FONT_CACHE] if FONT_CACHE.is_dir() else [])],
            limits=LIMITS,
            hostname="osworld",
            user=dataclasses.replace(user, name="user"),  # OSWorld's user name
            links={UPSTREAM_RUNTIME_DIR: RUNTIME_DIR},
            forwards={PROXY_PORT: self._egress.target} if self._egress is not None else {},
        )
        # the forward's bridge to the egress gate lives on the gate's event loop
        run = self._egress.run if self._egress is not None else asyncio.run
        self._command = run(sandboxed_command(spec))
        self._spawn(self._command)
        self._open_channels()
        self.client = DesktopClient("127.0.0.1", self.ports[SERVER_PORT])
        self.client.wait_ready(START_TIMEOUT, self._gone)
        self._server_socket = self._network.listener(SERVER_PORT) if self._network else None
        # what a later start kills if this run dies without stopping the desktop
        namespace = next(filter(None, map(_pid_namespace, self.processes())), None)
        if namespace is not None:
            (self.state / "pidns").write_text(namespace)

    def _open_channels(self) -> None:
        """The host's ports to the server and to VLC, once the sandbox's network namespace exists."""
        deadline = time.monotonic() + START_TIMEOUT
        while (pid := next(iter(self.processes()), None)) is None:
            if (why := self._gone()) is not None or time.monotonic() > deadline:
                raise ForgeError(f"the OSWorld desktop did not start: {why or 'no process in its sandbox'}")
            time.sleep(0.02)
        self._network = network = NetworkNamespace(pid)
        assert self.state is not None
        checks = {
            SERVER_PORT: lambda inode: self._server_socket in (None, inode),
            VLC_PORT: self._is_vlc,
            DEBUG_PORT: trusted_browser(self.processes, self.state / "tools" / CHROME_DIR, self.root),
        }
        for inner, trusted in checks.items():
            # Chrome's debugging port is used by Playwright's driver, a child process of this one
            allowed = run_processes if inner == DEBUG_PORT else None
            channel = PrivatePort(network.connector(inner, trusted), allowed)
            self._channels.append(channel)
            self.ports[inner] = channel.port

    def _is_vlc(self, inode: str | None) -> bool:
        """VLC's HTTP interface is served by VLC (not by a program the agent started in its place)."""
        holders = socket_holders(inode, self.processes()) if inode is not None else []
        return bool(holders) and all(_executable(pid) == "vlc" for pid in holders)

    def _install_server(self, tools: Path) -> None:
        """Copy the tree's in-VM server into the tools folder; its screenshots go to the desktop's /tmp."""
        source = (self.tree or data_root()) / SERVER_DIR
        if not (source / "main.py").is_file():
            raise ForgeError(
                f"the OSWorld tree has no in-VM server at {source}/main.py",
                hint="use a full OSWorld tree (--data-dir), not a copy of evaluation_examples/ alone",
            )
        shutil.copytree(source, tools / SERVER_AT, ignore=shutil.ignore_patterns("__pycache__"))
        (tools / SERVER_AT / "screenshots").symlink_to(SCREENSHOTS_AT)

    def _write_tools(self) -> Path:
        """The read-only tools folder: the `_inside` programs, a copy of the site packages, `python`
        (OSWorld's task steps call `python`; Debian has only `python3` unless python-is-python3 is
        installed on the host) and `sudo` (root in the box)."""
        assert self.state is not None
        tools = self.state / "tools"
        shutil.copytree(INSIDE_DIR, tools, ignore=shutil.ignore_patterns("__pycache__", "__init__.py"))
        if self.site_dir is not None and self.site_dir.is_dir():
            shutil.copytree(self.site_dir, tools / "site", ignore=shutil.ignore_patterns("__pycache__"))
        (tools / "bin").mkdir()
        (tools / "bin" / "python").symlink_to(SYSTEM_PYTHON)
        (tools / "bin" / "sudo").symlink_to("../sudo.py")  # relative: a container sees tools elsewhere
        (tools / "password").write_text(PASSWORD + "\n")  # the agent's prompt gives it the password too
        self._install_server(tools)
        _set_modes(tools)
        env = browser_env(self._environment(tools))
        write_launcher(tools / "bin", tools / CHROME_DIR, env, egress=self._egress is not None)
        (tools / "sudo.py").chmod(0o755)
        return tools

    def _environment(self, tools: Path) -> dict[str, str]:
        runtime = RUNTIME_DIR
        return {
            "DISPLAY": ":0",
            "HOME": HOME,
            "USER": "user",
            "LOGNAME": "user",
            "SHELL": "/bin/bash",
            "PATH": f"{tools / 'bin'}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
            "LANG": "C.UTF-8",
            "XDG_RUNTIME_DIR": runtime,
            "DBUS_SESSION_BUS_ADDRESS": f"unix:path={runtime}/bus",
            # LibreOffice exposes its widgets to AT-SPI only through the GTK3 VCL plugin.
            "SAL_USE_VCLPLUGIN": "gtk3",
            "GTK_MODULES": "gail:atk-bridge",
            "NO_AT_BRIDGE": "0",
            # Chromium exposes its widgets only when told to; OSWorld's image has accessibility on (its
            # server's README sets GNOME's toolkit-accessibility), so the a11y_tree observation shows Chrome
            "ACCESSIBILITY_ENABLED": "1",
            # Qt apps (VLC) expose their widgets only when asked to.
            "QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1",
            "QT_ACCESSIBILITY": "1",
            "PYTHONPATH": str(tools / "site"),
        }

    def _spawn(self, command: SandboxedCommand) -> None:
        """Start the sandbox from a thread that lives as long as it: bubblewrap's --die-with-parent fires
        when the *thread* that started it ends, and a worker thread of the caller's pool may end anytime."""
        assert self.state is not None
        started = threading.Event()
        failure: list[BaseException] = []
        log = self.state / "session.log"

        def keep() -> None:
            try:
                with open(log, "ab") as out:
                    self._proc = subprocess.Popen(
                        command.argv,
                        stdin=subprocess.DEVNULL,
                        stdout=out,
                        stderr=out,
                        env=command.env,
                        start_new_session=True,
                    )
            except BaseException as exc:
                failure.append(exc)
                return
            finally:
                started.set()
            self._proc.wait()

        self._keeper = threading.Thread(target=keep, name=f"osworld-desktop-{self.uid}", daemon=True)
        self._keeper.start()
        started.wait()
        if failure:
            raise failure[0]

    def _gone(self) -> str | None:
        """Why the sandbox has ended, or None while it runs."""
        if self._proc is None or self._proc.poll() is None:
            return None
        assert self.state is not None
        tail = (self.state / "session.log").read_text(errors="replace").strip().splitlines()[-5:]
        return f"its sandbox exited with code {self._proc.returncode}: " + (" | ".join(tail) or "no output")

    def stop(self) -> None:
        """End every process of the desktop and remove its state folder (home, tools, log)."""
        if self.client is not None:
            self.client.close()
            self.client = None
        if self._proc is not None and self._proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._proc.pid, signal.SIGKILL)  # bubblewrap's PID namespace takes the rest
        if self._keeper is not None:
            self._keeper.join(10)
            self._keeper = None
        self._proc = None
        if self._command is not None:
            (self._egress.run if self._egress is not None else asyncio.run)(self._command.close())
            self._command = None
        if self.uid >= 0:
            _kill_uid(self.uid)  # a process that left the sandbox's cgroup would still be the uid's
        for channel in self._channels:
            channel.close()
        self._channels.clear()
        if self._egress is not None:
            self._egress.close()
            self._egress = None
        if self._network is not None:
            self._network.close()
            self._network = None
        self._server_socket = None
        self.ports.clear()
        if self.state is not None:
            shutil.rmtree(self.state, ignore_errors=True)
            self.state = None
        self._user.close()
        self.uid = -1

    def __enter__(self) -> LocalDesktop:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def root(self) -> Path:
        """The desktop's file system, as this process sees it (the sandbox's /usr is the host's)."""
        return Path("/")

    @property
    def home(self) -> Path:
        """The host folder the desktop sees as /home/user."""
        assert self.state is not None, "the desktop is not started"
        return self.state / "home"

    def processes(self) -> list[int]:
        """Pids of the desktop's processes (all of them run as its uid)."""
        return _pids_of(self.uid) if self.uid >= 0 else []


def _set_modes(root: Path) -> None:
    """Folders 0755, files 0644 under `root` (symlinks left alone: chmod would follow them)."""
    for folder, _dirs, files in os.walk(root):
        os.chmod(folder, 0o755)
        for name in files:
            if not os.path.islink(os.path.join(folder, name)):
                os.chmod(os.path.join(folder, name), 0o644)


# -- state folders and leftovers ---------------------------------------------------------------------------
def _process_identity(pid: int) -> str | None:
    """`pid` plus its start time (a reused pid has another one); None when no such process runs."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return f"{pid} {stat.rsplit(')', 1)[1].split()[19]}"


def _claim(uid: int) -> Path:
    """A new state folder for the desktop of `uid`, with its owner (this process) and uid recorded."""
    STATE_ROOT.mkdir(mode=0o711, parents=True, exist_ok=True)
    state = Path(tempfile.mkdtemp(prefix="desktop-", dir=STATE_ROOT))
    state.chmod(0o711)
    (state / "owner").write_text(f"{_process_identity(os.getpid())} {uid}")
    return state


def _owner(state: Path) -> tuple[str, int] | None:
    """(owner identity, uid) of a state folder; None while it is being claimed."""
    try:
        pid, started, uid = (state / "owner").read_text().split()
    except (FileNotFoundError, ValueError):
        return None
    return f"{pid} {started}", int(uid)


def clean_leftovers() -> list[str]:
    """Remove what killed runs left: the state folders (homes, logs) of desktops whose run is gone, with
    any process still in such a desktop's PID namespace, and the host users (their processes and
    /home/user) that earlier forge-eval versions created. Returns what was removed, one line each."""
    removed = []
    for state in sorted(STATE_ROOT.glob("desktop-*")) if STATE_ROOT.is_dir() else []:
        owner = _owner(state)
        if owner is None and time.time() - state.stat().st_mtime < START_TIMEOUT:
            continue  # being claimed by a run that is starting now
        if owner is not None and _process_identity(int(owner[0].split()[0])) == owner[0]:
            continue  # its run is alive
        pids = []
        if owner is not None and (state / "pidns").is_file():
            pids = _kill_uid(owner[1], (state / "pidns").read_text())
        shutil.rmtree(state, ignore_errors=True)
        removed.append(f"desktop state {state}" + (f" and its processes {pids}" if pids else ""))
    for user in pwd.getpwall():
        if user.pw_name.startswith(_LEGACY_USER_PREFIX):
            pids = _kill_uid(user.pw_uid)
            if os.path.isdir(HOME) and os.stat(HOME).st_uid == user.pw_uid:
                shutil.rmtree(HOME, ignore_errors=True)
            subprocess.run(["userdel", "--remove", "--force", user.pw_name], capture_output=True)
            removed.append(f"host user {user.pw_name} (uid {user.pw_uid}, processes {pids}, home {HOME})")
    return removed


def _executable(pid: int) -> str | None:
    with contextlib.suppress(OSError):
        return os.path.basename(os.readlink(f"/proc/{pid}/exe"))
    return None


def _pid_namespace(pid: int) -> str | None:
    with contextlib.suppress(OSError):
        return os.readlink(f"/proc/{pid}/ns/pid")
    return None


def _pids_of(uid: int, namespace: str | None = None) -> list[int]:
    """Live (not zombie) processes owned by `uid` (and in PID namespace `namespace`, if given)."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid != uid:
                    continue
                state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except (FileNotFoundError, ProcessLookupError, IndexError):
                continue
            if state != "Z" and (namespace is None or _pid_namespace(int(entry)) == namespace):
                pids.append(int(entry))
    return pids


def _kill_uid(uid: int, namespace: str | None = None) -> list[int]:
    """SIGTERM then SIGKILL every process owned by `uid` (only a desktop's own uid), or only those in PID
    namespace `namespace` (a dead run's uid may be another sandbox's now); the pids found."""
    found = _pids_of(uid, namespace)
    for sig, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 2.0)):
        pids = _pids_of(uid, namespace)
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and _pids_of(uid, namespace):
            time.sleep(0.05)
    return found
