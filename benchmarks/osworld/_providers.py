"""Providers: where an OSWorld desktop runs. One interface, three kinds.

* `local`  — an Xvfb desktop on this host, apps run by a throw-away user (optionally in bubblewrap), our
  controller in front of it. Runs on CI-like machines (no KVM, no container engine).
* `podman` / `docker` — the same desktop inside a container built from the Dockerfile shipped in
  `docker/` (inspect_evals style), the controller inside it. Needs a container engine, so it is not
  exercised by this project's tests (none runs on the CI machines).
* `vm` — OSWorld's own provider (its Ubuntu VM image under QEMU/KVM through `desktop_env`): the only way
  to leaderboard-comparable numbers. Needs KVM and OSWorld's full dependencies.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import httpx

from forge_eval._errors import ForgeError
from forge_eval._registry import Registry
from forge_eval.benchmarks.osworld._controller import Controller
from forge_eval.benchmarks.osworld._desktop import LocalDesktop, missing_programs
from forge_eval.benchmarks.osworld._home import provision

DOCKER_DIR = Path(__file__).with_name("docker")
IMAGE = "localhost/forge-eval-osworld-desktop:1"
_CONTAINER_PORT = 5000


@dataclass
class Session:
    """A running desktop: the controller URL OSWorld's clients talk to, and how to stop it."""

    host: str
    port: int
    screen: tuple[int, int] = (1920, 1080)
    _stop: list[Any] = field(default_factory=list)

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
    description = "Xvfb desktop on this host; apps run as a throw-away user (sandbox=True: inside bubblewrap)"

    def __init__(self, sandbox: bool = False) -> None:
        self.sandbox = sandbox

    def requirements(self) -> list[str]:
        missing = [f"program {m}" for m in missing_programs()]
        if self.sandbox and shutil.which("bwrap") is None:
            missing.append("program bwrap (apt package bubblewrap) for sandbox=true")
        if os.geteuid() != 0:
            missing.append("root: the local provider creates and deletes the desktop user (home /home/user)")
        return missing

    def start(self, apps: set[str]) -> Session:
        from forge_eval.benchmarks.osworld.install import desktop_site

        desktop = LocalDesktop(site_dir=desktop_site(), sandbox=self.sandbox).start()
        controller: Controller | None = None
        try:
            provision(desktop, apps)
            controller = Controller(desktop).start()
        except BaseException:
            desktop.stop()
            raise
        return Session(
            controller.host, controller.port, (desktop.width, desktop.height), [desktop.stop, controller.stop]
        )


class ContainerProvider(Provider):
    """The desktop in a container of an engine (`podman` or `docker`); the controller listens inside."""

    def __init__(self, engine: str) -> None:
        self.engine = engine
        self.name = engine  # type: ignore[misc]

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
                f"127.0.0.1::{_CONTAINER_PORT}",
                "-e",
                f"FORGE_OSWORLD_APPS={','.join(sorted(apps))}",
                IMAGE,
            ],
            capture_output=True,
            check=True,
        )
        container = run.stdout.decode().strip()
        port_line = subprocess.run(
            [self.engine, "port", container, str(_CONTAINER_PORT)], capture_output=True, check=True
        ).stdout.decode()
        port = int(port_line.strip().splitlines()[0].rsplit(":", 1)[1])
        session = Session(
            "127.0.0.1",
            port,
            _stop=[lambda: subprocess.run([self.engine, "rm", "-f", container], capture_output=True)],
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                httpx.get(f"http://127.0.0.1:{port}/platform", timeout=2).raise_for_status()
                return session
            except httpx.HTTPError:
                time.sleep(1)
        session.stop()
        raise ForgeError(f"the desktop container {container[:12]} did not answer within 120 s")


class VMProvider(Provider):
    """OSWorld's own VM through `desktop_env` (Docker + QEMU with KVM by default)."""

    name = "vm"
    description = "OSWorld's own Ubuntu VM via desktop_env (needs KVM + docker; leaderboard-comparable)"

    def __init__(self, vm_provider: str = "docker") -> None:
        self.vm_provider = vm_provider

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
                hint="on a machine with KVM: pip install desktop-env (with its dependencies); else use "
                "--provider local or podman (results are then 'OSWorld on Debian', not leaderboard numbers)",
            )
        from forge_eval.benchmarks.osworld._evaluators import desktop_env

        env = desktop_env().DesktopEnv(provider_name=self.vm_provider, os_type="Ubuntu")
        return Session(env.vm_ip, env.server_port, _stop=[env.close])


PROVIDERS: Registry[Any] = Registry("OSWorld provider")
PROVIDERS.register("local", LocalProvider)
PROVIDERS.register("podman", lambda **_: ContainerProvider("podman"))
PROVIDERS.register("docker", lambda **_: ContainerProvider("docker"))
PROVIDERS.register("vm", VMProvider)


def make_provider(name: str, sandbox: bool = False) -> Provider:
    factory = PROVIDERS.get(name)
    return factory(sandbox=sandbox) if name == "local" else factory()
