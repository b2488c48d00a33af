"""Bad models, keys, endpoints and run directories: one clear message, the right exit status, nothing left."""

import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import tests.runner._probe_benchmark  # noqa: F401  (registers the "probe" benchmark)
from forge_eval._cli.main import cli
from forge_eval._errors import ForgeError, UsageError
from tests.runner._recording_server import recording_server

FORGE = Path(sys.executable).with_name("forge-eval")


def _invoke(*args: str):
    return CliRunner().invoke(cli, ["run", "probe", *args], standalone_mode=False, catch_exceptions=True)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--model", "nonexistent/x"], [], "--model nonexistent/x: Model API nonexistent"),
        (["--model", "openai/gpt-4.1"], ["OPENAI_API_KEY"], "No OPENAI_API_KEY"),
        (["--model", "openai-api/vllm/m"], ["VLLM_API_KEY", "VLLM_BASE_URL"], "VLLM_"),
        (["--model-base-url", "http://127.0.0.1:1/v1"], [], "--model-base-url needs --model"),
    ],
)
def test_bad_model_or_missing_key_is_a_usage_error(tmp_path, monkeypatch, args, env, message):
    for name in env:
        monkeypatch.delenv(name, raising=False)
    out = tmp_path / "a" / "run"
    result = _invoke(*args, "--out", str(out))
    assert isinstance(result.exception, UsageError), result.exception
    assert result.exception.exit_code == 2 and message in str(result.exception)
    assert list(tmp_path.iterdir()) == []


def test_unwritable_out_is_a_usage_error_and_leaves_nothing_behind(tmp_path, monkeypatch):
    monkeypatch.setenv("REC_API_KEY", "test")
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")  # a file in the path fails mkdir even as root
    out = blocker / "run"
    with recording_server() as (url, seen):
        result = _invoke("--model", "openai-api/rec/m", "--model-base-url", url, "--out", str(out))
    assert isinstance(result.exception, UsageError), result.exception
    assert result.exception.exit_code == 2
    assert f"cannot write the run directory {out}" in str(result.exception)
    assert list(tmp_path.iterdir()) == [blocker]
    assert seen == []  # refused before any model call


def test_missing_ancestors_created_for_the_run_are_removed_on_failure(tmp_path, monkeypatch):
    from forge_eval import _files

    monkeypatch.setenv("REC_API_KEY", "test")
    out = tmp_path / "x" / "y" / "run"
    real_replace = _files.os.replace

    def full_disk(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_files.os, "replace", full_disk)
    with recording_server() as (url, _seen):
        result = _invoke("--model", "openai-api/rec/m", "--model-base-url", url, "--out", str(out))
    monkeypatch.setattr(_files.os, "replace", real_replace)
    assert isinstance(result.exception, UsageError)
    assert "No space left on device" in str(result.exception)
    assert list(tmp_path.iterdir()) == []


def test_unreachable_endpoint_fails_fast_with_one_line(tmp_path):
    port = _closed_port()
    out = tmp_path / "run"
    done = subprocess.run(
        [str(FORGE), "run", "forgelab", "--model", "openai-api/vllm/m"]
        + ["--model-base-url", f"http://127.0.0.1:{port}/v1", "--out", str(out), "--seeds", "1"],
        capture_output=True,
        text=True,
        timeout=120,  # a hang guard: Inspect alone would retry for many minutes
    )
    assert done.returncode == 1, done.stderr
    error_lines = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(error_lines) == 1, done.stderr
    assert error_lines[0].startswith(f"error: --model-base-url http://127.0.0.1:{port}/v1 does not answer")
    assert "Traceback" not in done.stderr
    assert not out.exists()


def test_endpoint_that_refuses_the_key(tmp_path):
    from forge_eval.runner._model import check_endpoint

    with recording_server() as (url, _seen):
        check_endpoint(url, "any")  # the recording server answers (404 on /models): reachable
    with pytest.raises(ForgeError, match="does not answer"):
        check_endpoint(f"http://127.0.0.1:{_closed_port()}/v1", None)
