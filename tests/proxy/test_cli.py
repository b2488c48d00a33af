"""`forge-eval proxy` usage errors are messages with exit status 2, not tracebacks."""

import subprocess
import sys


def forge(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "forge_eval._cli.main", *args], capture_output=True, text=True, timeout=60
    )


def test_serve_rejects_a_non_http_upstream():
    result = forge("proxy", "serve", "--upstream", "localhost:8000")
    assert result.returncode == 2
    assert "--upstream must be an http(s) URL, got 'localhost:8000'" in result.stderr
    assert "Traceback" not in result.stderr


def test_serve_requires_an_upstream_and_compact_a_records_dir(tmp_path):
    missing = forge("proxy", "serve")
    assert missing.returncode == 2 and "--upstream" in missing.stderr
    compact = forge("proxy", "compact", str(tmp_path / "none"))
    assert compact.returncode == 2 and "no records directory" in compact.stderr
