"""Starting and stopping the server process: the errors a user meets, and certain cleanup."""

import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from forge_eval._cli.main import cli
from forge_eval._errors import ForgeError, UnknownNameError
from forge_eval.models import EMBEDDED_MODELS, EmbeddedModelServer


@pytest.fixture
def busy_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    yield sock.getsockname()[1]
    sock.close()


def test_port_busy_names_the_port_and_the_way_out(busy_port: int, tmp_path: Path) -> None:
    server = EmbeddedModelServer(model="smollm2", port=busy_port, model_path=tmp_path / "unused.gguf")
    with pytest.raises(ForgeError) as info:
        server.start()
    assert f"port {busy_port} on 127.0.0.1 is already in use" in info.value.message
    assert "--port" in info.value.hint
    server.stop()


def test_cli_port_busy_is_a_message_not_a_traceback(busy_port: int) -> None:
    if not EMBEDDED_MODELS.get("smollm2").installed():
        pytest.skip("smollm2 weights not installed")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "forge_eval._cli.main",
            "serve-model",
            "--model",
            "smollm2",
            "--port",
            str(busy_port),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert f"port {busy_port} on 127.0.0.1 is already in use" in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_model_lists_valid_names() -> None:
    with pytest.raises(UnknownNameError, match="qwen-0.5b, qwen-1.5b, smollm2"):
        EmbeddedModelServer(model="gpt-5")
    result = CliRunner().invoke(cli, ["serve-model", "--model", "gpt-5"], standalone_mode=False)
    assert isinstance(result.exception, UnknownNameError)
    assert result.exception.exit_code == 2


def test_server_that_crashes_while_starting_reports_its_log(tmp_path: Path) -> None:
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"GGUF" + b"\0" * 64)
    log = tmp_path / "server.log"
    server = EmbeddedModelServer(model="smollm2", model_path=bad, log_file=log, startup_timeout=120)
    with pytest.raises(ForgeError) as info:
        server.start()
    message = info.value.message
    assert "exited with status 1 while starting" in message
    assert str(log) in message
    assert "llama.cpp could not load" in message and "broken.gguf" in message
    assert server.pid is None
    server.stop()
    server.stop()


def test_startup_timeout_stops_the_child(tmp_path: Path) -> None:
    """A server that never becomes healthy in time is killed, and the error says what to do."""
    smollm = EMBEDDED_MODELS.get("smollm2")
    if not smollm.installed():
        pytest.skip("smollm2 weights not installed")
    server = EmbeddedModelServer(model="smollm2", startup_timeout=0.01)
    with pytest.raises(ForgeError, match="did not answer") as info:
        server.start()
    assert "startup_timeout" in info.value.hint
    assert server.pid is None
    assert server.log_file is not None and server.log_file.exists(), "the log named in the error is kept"
    shutil.rmtree(server.log_file.parent)


def test_stop_removes_its_temporary_log() -> None:
    if not EMBEDDED_MODELS.get("smollm2").installed():
        pytest.skip("smollm2 weights not installed")
    with EmbeddedModelServer(model="smollm2") as server:
        log = server.log_file
        assert log is not None and log.exists()
    assert not log.parent.exists()
