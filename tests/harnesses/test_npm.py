"""Installing harness packages on demand: an already installed pin is a no-op, an unreachable registry is a
clear error that names the package and what to do."""

import shutil

import pytest

from forge_eval._errors import ForgeError
from forge_eval.harnesses import HARNESSES, ensure_installed, npm_prefix
from forge_eval.harnesses._npm import NpmPackage, missing


def test_installed_pins_are_found_without_npm(monkeypatch):
    codex = HARNESSES.get("codex").packages
    if missing(list(codex), npm_prefix()):
        pytest.skip("codex is not installed: run `bash scripts/setup.d/30-harnesses.sh` (CI does)")
    monkeypatch.setenv("PATH", "/nonexistent")  # no npm: nothing may need it
    assert ensure_installed(list(codex)) == npm_prefix()


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_offline_install_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("npm_config_registry", "http://127.0.0.1:9/")  # nothing listens on port 9
    monkeypatch.setenv("npm_config_fetch_retries", "0")
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))
    package = NpmPackage("left-pad", "1.3.0")
    with pytest.raises(ForgeError) as failed:
        ensure_installed([package], tmp_path / "prefix")
    message = str(failed.value)
    assert "could not install left-pad@1.3.0 into" in message
    assert "the npm registry must be reachable once" in message
    assert not missing([], tmp_path / "prefix") and missing([package], tmp_path / "prefix") == [package]


def test_a_package_json_version_with_a_v_is_the_registry_version(tmp_path):
    """@upstash/context7-mcp 1.0.14 publishes "v1.0.14" in its package.json: installed, not missing."""
    folder = tmp_path / "node_modules" / "@upstash" / "context7-mcp"
    folder.mkdir(parents=True)
    (folder / "package.json").write_text('{"name": "@upstash/context7-mcp", "version": "v1.0.14"}')
    package = NpmPackage("@upstash/context7-mcp", "1.0.14")
    assert package.installed_version(tmp_path) == "1.0.14" and not missing([package], tmp_path)
