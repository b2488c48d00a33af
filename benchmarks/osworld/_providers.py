"""Providers: where an OSWorld desktop runs. One interface, three kinds.

* `local`  — an Xvfb desktop on this host, the whole of it (apps, the agent's actions, the tree's in-VM
  server) inside one bubblewrap sandbox run by a throw-away uid. Runs on CI-like machines (no KVM, no
  container engine).
* `docker` / `podman` — the same desktop (its programs, session, server and channels) in a container of
  a local engine, built from the Dockerfile in `docker/` (`_container`, `_image`), run by its
  unprivileged `user` with no network, capability or host mount.
* `vm` — OSWorld's own provider (its Ubuntu VM image under QEMU/KVM through `desktop_env`): the only way
  to leaderboard-comparable numbers. Needs KVM, Docker and two downloads (`_vm`).
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from forge_eval._errors import ForgeError
from forge_eval._registry import Registry
from forge_eval.benchmarks.osworld._chrome import DEBUG_PORT, UPSTREAM_PORT
from forge_eval.benchmarks.osworld._container import ContainerDesktop
from forge_eval.benchmarks.osworld._data import data_root
from forge_eval.benchmarks.osworld._desktop import VLC_PORT, LocalDesktop, missing_programs
from forge_eval.benchmarks.osworld._evaluators import desktop_env
from forge_eval.benchmarks.osworld._home import provision
from forge_eval.benchmarks.osworld._image import engine_problems
from forge_eval.benchmarks.osworld._vm import disk_path, missing_downloads, vm_problems
from forge_eval.benchmarks.osworld.install import desktop_site, missing_desktop_packages


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
    #: Whether a bare desktop can be started ahead of its sample (`bare_desktop`), apps provisioned later.
    prestarts: ClassVar[bool] = False

    def requirements(self) -> list[str]:
        """What is missing here to start this provider's desktops, one message each."""
        return []

    @abstractmethod
    def start(self, apps: set[str], desktop: LocalDesktop | None = None) -> Session:
        """A fresh desktop with `apps` brought to their first-run-done state; `desktop`: one that
        `bare_desktop` started ahead, which no task has touched."""

    def bare_desktop(self) -> LocalDesktop:
        """A started desktop without its apps provisioned (blocking; `prestarts` providers only)."""
        raise NotImplementedError(f"the {self.name} provider cannot start a desktop ahead of its sample")


class LocalProvider(Provider):
    name = "local"
    description = "Xvfb desktop on this host, all of it in a bubblewrap sandbox run by a throw-away uid"
    prestarts = True

    def __init__(self, tree: Path | None = None) -> None:
        self.tree = tree

    def requirements(self) -> list[str]:
        missing = [f"program {m}" for m in missing_programs()] + _desktop_packages()
        if os.geteuid() != 0:
            missing.append("root: each desktop runs as a throw-away uid, which only root can switch to")
        return missing

    def _desktop(self) -> LocalDesktop:
        return LocalDesktop(site_dir=desktop_site(), tree=self.tree)

    def bare_desktop(self) -> LocalDesktop:
        return self._desktop().start()

    def start(self, apps: set[str], desktop: LocalDesktop | None = None) -> Session:
        desktop = desktop or self.bare_desktop()
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


class ContainerProvider(LocalProvider):
    """The local desktop in a container of an engine (`docker` or `podman`) instead of a sandbox."""

    description = "the local desktop in a container of a local engine (image: benchmarks/osworld/docker)"

    def __init__(self, engine: str, tree: Path | None = None) -> None:
        super().__init__(tree)
        self.engine = engine
        self.name = engine  # type: ignore[misc]

    def requirements(self) -> list[str]:
        missing = engine_problems(self.engine) + _desktop_packages()
        if os.geteuid() != 0:
            missing.append("root: the host opens its channels to the server inside the container's namespace")
        return missing

    def _desktop(self) -> LocalDesktop:
        if missing := self.requirements():
            raise ForgeError(
                f"the {self.engine} provider cannot start: {'; '.join(missing)}",
                hint="scripts/setup.d/65-container-engine.sh installs and starts docker (Debian, as root); "
                "or use -T provider=local",
            )
        return ContainerDesktop(engine=self.engine, site_dir=desktop_site(), tree=self.tree)


class VMProvider(Provider):
    """OSWorld's own VM through `desktop_env` (Docker + QEMU with KVM by default)."""

    name = "vm"
    description = "OSWorld's own Ubuntu VM via desktop_env (needs KVM + docker; leaderboard-comparable)"

    def __init__(self, vm_provider: str = "docker", tree: Path | None = None) -> None:
        self.vm_provider = vm_provider
        self.tree = tree

    def requirements(self) -> list[str]:
        return vm_problems() if self.vm_provider == "docker" else []

    def start(self, apps: set[str], desktop: LocalDesktop | None = None) -> Session:
        assert desktop is None, "OSWorld's own VM is started by its DesktopEnv"
        missing = self.requirements()
        if missing:
            raise ForgeError(
                f"OSWorld's own VM provider cannot run here: {'; '.join(missing)}",
                hint="on a machine with KVM and Docker; else use -T provider=local or docker "
                "(results are then 'OSWorld on Debian', not leaderboard numbers)",
            )
        tree = self.tree or data_root()
        if self.vm_provider == "docker" and (downloads := missing_downloads(tree)):
            raise ForgeError(
                f"OSWorld's own VM needs downloads that are not here: {'; and '.join(downloads)}",
                hint="online, once: see 'OSWorld's own VM' on the OSWorld page of the docs",
            )
        api = desktop_env(tree)
        env = api.DesktopEnv(
            provider_name=self.vm_provider, os_type="Ubuntu", path_to_vm=str(disk_path()), headless=True
        )
        return Session(env.vm_ip, env.server_port, vlc_port=env.vlc_port, _stop=[env.close])


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


def _desktop_packages() -> list[str]:
    """What the desktop's Python lacks, as one requirement (local and container desktops run it alike)."""
    packages = missing_desktop_packages(desktop_site())
    if not packages:
        return []
    install = "python -m forge_eval.benchmarks.osworld.install"
    return [f"the desktop's Python packages {', '.join(packages)} ({install})"]
