"""The container providers' desktop image: built from `docker/Dockerfile` by the local engine, once.

Its build context is the Dockerfile and the setup scripts that install the local desktop's Debian
packages (`scripts/setup.d/60-desktop.sh --apt-only`, with `_apt.bash`), so the container has the same
programs as the local desktop. The image's tag is the digest of that context and of the base: a changed
package list builds a new image, an unchanged one is reused (the build takes minutes; a start, a second).

The base is any Debian 12 image: `debian:bookworm` from a registry, or — where none is reachable, as on
forge-eval's CI — `localhost/forge-eval-debian:bookworm`, which scripts/setup.d/65-container-engine.sh
imports from a debootstrap root file system. The build's own steps (apt) use the host's network; the
desktop's containers have none.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from forge_eval._errors import ForgeError
from forge_eval._registry import Registry

DOCKER_DIR = Path(__file__).with_name("docker")
#: forge-eval's source checkout (the package is installed from it in editable mode).
CHECKOUT = Path(__file__).resolve().parents[2]
#: The build context: Dockerfile and the scripts it runs, by the name it copies each under.
CONTEXT = {
    "Dockerfile": DOCKER_DIR / "Dockerfile",
    "_apt.bash": CHECKOUT / "scripts" / "setup.d" / "_apt.bash",
    "60-desktop.sh": CHECKOUT / "scripts" / "setup.d" / "60-desktop.sh",
}
REPOSITORY = "localhost/forge-eval-osworld-desktop"
#: A Debian 12 base imported from debootstrap (scripts/setup.d/65-container-engine.sh), preferred when
#: present: no registry needed.
LOCAL_BASE = "localhost/forge-eval-debian:bookworm"
REGISTRY_BASE = "debian:bookworm"


@dataclass(frozen=True)
class Engine:
    """How to call a container engine, and the Debian package that ships it."""

    argv: tuple[str, ...]
    package: str


#: podman runs containers only with runc on this kind of host (crun fails on hybrid cgroups).
ENGINES: Registry[Engine] = Registry("container engine")
ENGINES.register("docker", Engine(("docker",), "docker.io"))
ENGINES.register("podman", Engine(("podman", "--runtime", "runc"), "podman"))


def engine_command(engine: str) -> list[str]:
    """The argv that starts a command of `engine`."""
    return list(ENGINES.get(engine).argv)


def engine_problems(engine: str) -> list[str]:
    """Why `engine` cannot run containers here, one message each (none when it can)."""
    if shutil.which(engine) is None:
        return [f"{engine} is not installed (Debian: apt-get install {ENGINES.get(engine).package})"]
    info = subprocess.run([*engine_command(engine), "info"], capture_output=True)
    if info.returncode != 0:
        why = info.stderr.decode(errors="replace").strip().splitlines()
        return [f"{engine} cannot reach its engine ({(why or ['no output'])[-1][:200]})"]
    return []


def has_image(engine: str, image: str) -> bool:
    inspect = [*engine_command(engine), "image", "inspect", image]
    return subprocess.run(inspect, capture_output=True).returncode == 0


def base_image(engine: str) -> str:
    """The base the desktop image is built on: the imported Debian root if present, else the registry's."""
    return LOCAL_BASE if has_image(engine, LOCAL_BASE) else REGISTRY_BASE


def image_tag(base: str) -> str:
    """The desktop image's name for this build context on `base`."""
    digest = hashlib.sha256(base.encode())
    for name, path in sorted(CONTEXT.items()):
        digest.update(f"\0{name}\0".encode() + path.read_bytes())
    return f"{REPOSITORY}:{digest.hexdigest()[:12]}"


def ensure_image(engine: str, quiet: bool = True) -> str:
    """The desktop image of this context, built first if `engine` lacks it; its name."""
    missing = [str(path) for path in CONTEXT.values() if not path.is_file()]
    if missing:
        raise ForgeError(
            "building the OSWorld desktop image needs forge-eval's source checkout; missing: "
            + ", ".join(missing),
            hint="install forge-eval from a checkout (pip install -e .), or use --provider local",
        )
    base = base_image(engine)
    tag = image_tag(base)
    if has_image(engine, tag):
        return tag
    with tempfile.TemporaryDirectory(prefix="forge-osworld-image-") as context:
        for name, path in CONTEXT.items():
            shutil.copy2(path, Path(context) / name)
        build = [
            *engine_command(engine),
            "build",
            "--network=host",  # the build's apt; the desktops' containers get no network
            f"--build-arg=BASE={base}",
            f"--tag={tag}",
            context,
        ]
        done = subprocess.run(
            build,
            env={**os.environ, "DOCKER_BUILDKIT": "0"},  # the engine's own builder: no buildx plugin needed
            capture_output=quiet,
        )
    if done.returncode != 0:
        tail = (done.stderr or b"").decode(errors="replace").strip()[-600:]
        raise ForgeError(
            f"building the OSWorld desktop image {tag} on {base} with {engine} failed"
            + (f": {tail}" if tail else ""),
            hint="scripts/setup.d/65-container-engine.sh sets up docker and a Debian base without a registry",
        )
    _remove_older(engine, tag)
    return tag


def _remove_older(engine: str, keep: str) -> None:
    """Drop the desktop images of earlier contexts (each is a couple of GB)."""
    listed = subprocess.run(
        [*engine_command(engine), "images", REPOSITORY, "--format", "{{.Repository}}:{{.Tag}}"],
        capture_output=True,
        text=True,
    )
    for image in listed.stdout.split():
        if image != keep:
            subprocess.run([*engine_command(engine), "rmi", image], capture_output=True)
