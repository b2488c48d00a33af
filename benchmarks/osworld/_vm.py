"""What OSWorld's own VM provider needs before it can boot: KVM, a Docker engine, the tree's provider
code's imports, its container image and its Ubuntu disk image.

The pinned tree's `desktop_env/providers/docker` runs OSWorld's Ubuntu VM under QEMU/KVM inside the
container image `happysixd/osworld-docker`, booting `Ubuntu.qcow2`, which it downloads itself on first
use (about 12 GB) into `./docker_vm_data` of whatever folder the run started in. Everything here is
checked first, and the two downloads are named with where they go, so that a run without them stops
before its first sample with one message instead of a long download or a pull that fails offline. The
disk is kept in forge-eval's cache and handed to `DesktopEnv` as `path_to_vm`.
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import re
from pathlib import Path

from forge_eval.benchmarks._acquire import cache_root
from forge_eval.benchmarks.osworld._image import engine_problems, has_image

#: The image the tree's Docker provider runs (`desktop_env/providers/docker/provider.py`).
VM_IMAGE = "happysixd/osworld-docker"
#: The disk image the tree's manager downloads, unzipped (`desktop_env/providers/docker/manager.py`).
DISK = "Ubuntu.qcow2"
MANAGER = Path("desktop_env/providers/docker/manager.py")
#: Sizes of xlangai/ubuntu_osworld's Ubuntu.qcow2.zip and of the disk in it (published 2025), in GB.
DISK_ZIP_GB = 12.3
DISK_GB = 24.5
#: What the tree's Docker provider imports beyond the checkers' packages (module -> pip package).
PROVIDER_MODULES = {"docker": "docker", "psutil": "psutil", "filelock": "filelock"}
_KVM_GET_API_VERSION = 0xAE00
_KVM_API_VERSION = 12


def disk_path() -> Path:
    """Where the VM's disk image goes (`FORGE_CACHE_DIR` or ~/.cache/forge-eval, osworld-vm/)."""
    return cache_root().parent / "osworld-vm" / DISK


def disk_url(tree: Path) -> str:
    """The disk image's download address, as the pinned tree's manager has it."""
    found = re.search(r'UBUNTU_X86_URL\s*=\s*"([^"]+)"', (tree / MANAGER).read_text())
    if found is None:
        raise ValueError(f"{tree / MANAGER} names no UBUNTU_X86_URL")
    return found.group(1)


def kvm_problem(device: str = "/dev/kvm") -> str | None:
    """Why KVM cannot run a VM here (None when /dev/kvm opens and answers its API version)."""
    try:
        fd = os.open(device, os.O_RDWR | os.O_CLOEXEC)
    except OSError as exc:
        return f"{device} (hardware virtualisation) cannot be opened: {exc.strerror}"
    try:
        version = fcntl.ioctl(fd, _KVM_GET_API_VERSION)
    except OSError as exc:
        return f"{device} does not answer as KVM: {exc.strerror}"
    finally:
        os.close(fd)
    return None if version == _KVM_API_VERSION else f"{device} speaks KVM API {version}, not 12"


def vm_problems() -> list[str]:
    """What is missing here to run the tree's VM provider at all, one message each."""
    problems = [problem] if (problem := kvm_problem()) else []
    problems += [f"{p} (OSWorld's VM runs in a Docker container)" for p in engine_problems("docker")]
    absent = [pkg for module, pkg in PROVIDER_MODULES.items() if importlib.util.find_spec(module) is None]
    if absent:
        problems.append(
            f"the Python packages the tree's Docker provider imports: pip install {' '.join(absent)}"
        )
    return problems


def missing_downloads(tree: Path) -> list[str]:
    """The VM's downloads that are not here, each with what to fetch, where it goes and its size."""
    missing = []
    if not has_image("docker", VM_IMAGE):
        missing.append(f"the container image {VM_IMAGE} (docker pull {VM_IMAGE})")
    disk = disk_path()
    if not disk.is_file():
        missing.append(
            f"the Ubuntu disk image {disk_url(tree)} ({DISK_ZIP_GB} GB zipped, {DISK_GB} GB unzipped), "
            f"unzipped to {disk}"
        )
    return missing
