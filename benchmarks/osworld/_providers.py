"""Providers: where an OSWorld desktop runs. One interface, three kinds.

* `local`  — an Xvfb desktop on this host, the whole of it (apps, the agent's actions, the tree's in-VM
  server) inside one bubblewrap sandbox run by a throw-away uid. Runs on CI-like machines (no KVM, no
  container engine).
* `podman` / `docker` — the same desktop programs inside a container built from the Dockerfile shipped
  in `docker/` (inspect_evals style), run by its unprivileged `user`. Needs a container engine, so it is
  not exercised by this project's tests (none runs on the CI machines).
* `vm` — OSWorld's own provider (its Ubuntu VM image under QEMU/KVM through `desktop_env`): the only way
  to leaderboard-comparable numbers. Needs KVM and OSWorld's full dependencies.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from forge_eval._errors import ForgeError
from forge_eval._registry import Registry
from forge_eval.benchmarks.osworld._chrome import DEBUG_PORT, UPSTREAM_PORT
from forge_eval.benchmarks.osworld._client import DesktopClient
from forge_eval.benchmarks.osworld._data import data_root
from forge_eval.benchmarks.osworld._desktop import (
    SERVER_DIR,
    SERVER_PORT,
    VLC_PORT,
    LocalDesktop,
    missing_programs,
)
from forge_eval.benchmarks.osworld._evaluators import desktop_env
from forge_eval.benchmarks.osworld._home import provision
from forge_eval.benchmarks.osworld.install import desktop_site, missing_desktop_packages

DOCKER_DIR = Path(__file__).with_name("docker")
IMAGE = "localhost/forge-eval-osworld-desktop:1"
_START_TIMEOUT = 120


@dataclass
class Session:
    """A running desktop: where OSWorld's clients reach its server (`vm_ip:server_port`), VLC's HTTP
    interface (`vlc_port`) and Chrome's debugging port (`chromium_port`), and how to stop it."""

    host: str
    port: int
    screen: tuple[int, int] = (1920, 1080)
    vlc_port: int = VLC_PORT
    _stop: list[Any] = field(default_factory=list)
    chromium_port: int = UPSTREAM_PORT

    def on_stop(self, callback: Callable[[], Any]) -> None:
        """Call `callback` when the session stops (before what was registered earlier)."""
        self._stop.append(callback)

    def stop(self) -> None:
        while self._stop:
            self._stop.pop()()


class Provider(ABC):
    name: ClassVar[str]
    description: ClassVar[str]

    def requirements(self) -> list[str]:
        """What is missing here to start this provider's desktops, one message each."""
        return []

    @abstractmethod
    def start(self, apps: set[str]) -> Session:
        """A fresh desktop with `apps` brought to their first-run-done state."""


class LocalProvider(Provider):
    name = "local"
    description = "Xvfb desktop on this host, all of it in a bubblewrap sandbox run by a throw-away uid"

    def __init__(self, tree: Path | None = None) -> None:
        self.tree = tree

    def requirements(self) -> list[str]:
        missing = [f"program {m}" for m in missing_programs()]
        if packages := missing_desktop_packages(desktop_site()):
            missing.append(
                f"the desktop's Python packages {', '.join(packages)} "
                "(python -m forge_eval.benchmarks.osworld.install)"
            )
        if os.geteuid() != 0:
            missing.append("root: each desktop runs as a throw-away uid, which only root can switch to")
        return missing

    def start(self, apps: set[str]) -> Session:
        desktop = LocalDesktop(site_dir=desktop_site(), tree=self.tree).start()
        assert desktop.client is not None
        try:
            provision(desktop.client, apps)
        except BaseException:
            desktop.stop()
            raise
        return Session(
            desktop.client.host,
            desktop.client.port,
            (desktop.width, desktop.height),
            desktop.ports[VLC_PORT],
            [desktop.stop],
            desktop.ports[DEBUG_PORT],
        )


class ContainerProvider(Provider):
    """The desktop in a container of an engine (`podman` or `docker`); the tree's in-VM server listens
    inside."""

    def __init__(self, engine: str, tree: Path | None = None) -> None:
        self.engine = engine
        self.name = engine  # type: ignore[misc]
        self.tree = tree

    description = "desktop in a locally built container image (Dockerfile in benchmarks/osworld/docker)"

    def requirements(self) -> list[str]:
        if shutil.which(self.engine) is None:
            return [f"{self.engine} is not installed"]
        info = subprocess.run([self.engine, "info"], capture_output=True)
        if info.returncode != 0:
            return [
                f"{self.engine} cannot reach its engine "
                f"({info.stderr.decode(errors='replace').strip()[:200]})"
            ]
        return []

    def _ensure_image(self) -> None:
        if (
            subprocess.run(
                [self.engine, "image", "exists" if self.engine == "podman" else "inspect", IMAGE],
                capture_output=True,
            ).returncode
            == 0
        ):
            return
        root = Path(__file__).resolve().parents[2]  # the source checkout is the build context
        if not (root / "pyproject.toml").exists():
            raise ForgeError(
                f"building the desktop image needs forge-eval's source checkout; {root} is not one",
                hint=f"build it by hand: see {DOCKER_DIR / 'Dockerfile'}",
            )
        build = subprocess.run(
            [self.engine, "build", "-t", IMAGE, "-f", str(DOCKER_DIR / "Dockerfile"), str(root)]
        )
        if build.returncode != 0:
            raise ForgeError(f"building the OSWorld desktop image {IMAGE} with {self.engine} failed")

    def start(self, apps: set[str]) -> Session:
        missing = self.requirements()
        if missing:
            raise ForgeError(
                f"the {self.engine} provider cannot start: {'; '.join(missing)}",
                hint="use --provider local (root, Debian/Ubuntu) or install a container engine",
            )
        self._ensure_image()
        run = subprocess.run(
            [
                self.engine,
                "run",
                "-d",
                "--rm",
                "-p",
                f"127.0.0.1::{SERVER_PORT}",
                "-p",
                f"127.0.0.1::{VLC_PORT}",
                "-v",
                f"{((self.tree or data_root()) / SERVER_DIR).resolve()}:/opt/osworld-server:ro",
                IMAGE,
            ],
            capture_output=True,
            check=True,
        )
        container = run.stdout.decode().strip()
        session = Session(
            "127.0.0.1",
            self._host_port(container, SERVER_PORT),
            vlc_port=self._host_port(container, VLC_PORT),
            _stop=[lambda: subprocess.run([self.engine, "rm", "-f", container], capture_output=True)],
        )
        client = DesktopClient(session.host, session.port)
        try:
            client.wait_ready(_START_TIMEOUT)
            provision(client, apps)
        except BaseException:
            session.stop()
            raise
        finally:
            client.close()
        return session

    def _host_port(self, container: str, port: int) -> int:
        line = subprocess.run(
            [self.engine, "port", container, str(port)], capture_output=True, check=True
        ).stdout.decode()
        return int(line.strip().splitlines()[0].rsplit(":", 1)[1])


class VMProvider(Provider):
    """OSWorld's own VM through `desktop_env` (Docker + QEMU with KVM by default)."""

    name = "vm"
    description = "OSWorld's own Ubuntu VM via desktop_env (needs KVM + docker; leaderboard-comparable)"

    def __init__(self, vm_provider: str = "docker", tree: Path | None = None) -> None:
        self.vm_provider = vm_provider
        self.tree = tree

    def requirements(self) -> list[str]:
        missing = []
        if not os.access("/dev/kvm", os.R_OK | os.W_OK):
            missing.append("/dev/kvm (hardware virtualisation) is not usable")
        if self.vm_provider == "docker" and shutil.which("docker") is None:
            missing.append("docker (OSWorld's VM runs in its happysixd/osworld-docker image)")
        return missing

    def start(self, apps: set[str]) -> Session:
        missing = self.requirements()
        if missing:
            raise ForgeError(
                f"OSWorld's own VM provider cannot run here: {'; '.join(missing)}",
                hint="on a machine with KVM: install the OSWorld tree's requirements.txt; else use "
                "--provider local or podman (results are then 'OSWorld on Debian', not leaderboard numbers)",
            )
        api = desktop_env(self.tree or data_root())
        env = api.DesktopEnv(provider_name=self.vm_provider, os_type="Ubuntu")
        return Session(env.vm_ip, env.server_port, _stop=[env.close])


#: Provider factories, given the OSWorld tree of the run (its in-VM server, or its whole VM provider).
PROVIDERS: Registry[Callable[[Path | None], Provider]] = Registry("OSWorld provider")
PROVIDERS.register("local", lambda tree: LocalProvider(tree))
PROVIDERS.register("podman", lambda tree: ContainerProvider("podman", tree))
PROVIDERS.register("docker", lambda tree: ContainerProvider("docker", tree))
PROVIDERS.register("vm", lambda tree: VMProvider(tree=tree))


def make_provider(name: str, tree: Path | None = None) -> Provider:
    """The provider `name`; the local desktop runs the in-VM server of `tree`, OSWorld's own VM provider
    its DesktopEnv."""
    return PROVIDERS.get(name)(tree)
