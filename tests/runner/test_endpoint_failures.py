"""A model endpoint that fails on chat (or hangs) ends the run quickly with one message; `-M` keys the
model does not take are usage errors that list the keys it does take."""

import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from inspect_ai.log import list_eval_logs, read_eval_log_sample_summaries

import tests.runner._probe_benchmark  # noqa: F401  (registers the "probe" benchmark)
from forge_eval._cli.main import cli
from forge_eval._errors import ForgeError, UsageError
from forge_eval.runner import _execute
from forge_eval.runner._model import chat_failure
from tests.runner._recording_server import Hold, Outage, recording_server

FORGE = Path(sys.executable).with_name("forge-eval")


def _invoke(*args: str):
    return CliRunner().invoke(cli, ["run", *args], standalone_mode=False, catch_exceptions=True)


def _finished(log_dir: Path) -> int:
    return sum(
        1
        for info in list_eval_logs(str(log_dir))
        for s in read_eval_log_sample_summaries(info)
        if s.completed and s.error is None
    )


def test_an_endpoint_that_lists_models_but_fails_on_chat_ends_the_run_in_seconds(tmp_path):
    out = tmp_path / "run"
    with recording_server(outage=Outage(after=0, status=503)) as (url, seen):
        started = time.monotonic()
        done = subprocess.run(
            [str(FORGE), "run", "forgelab", "--quick", "--seeds", "2", "--model", "openai-api/vllm/m"]
            + ["--model-base-url", url, "--out", str(out)],
            capture_output=True,
            text=True,
            timeout=120,  # a hang guard: before the check, this run took 337 s of retries
        )
        took = time.monotonic() - started
    assert done.returncode == 1, done.stderr
    error_lines = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert error_lines == [
        f"error: --model-base-url {url} fails on chat requests (HTTP 503: the model is overloaded)"
    ], done.stderr
    assert "hint: the server is up but cannot answer" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert not out.exists() and seen == []
    print(f"503 endpoint: the run ended after {took:.1f} s")


def test_a_model_the_endpoint_does_not_serve_is_named_with_what_it_serves(tmp_path, monkeypatch):
    monkeypatch.setenv("VLLM_API_KEY", "test")
    outage = Outage(after=0, status=404, message="The model `qwen-7b` does not exist.")
    with recording_server(outage=outage) as (url, _seen):
        result = _invoke(
            "probe",
            "--model",
            "openai-api/vllm/qwen-7b",
            "--model-base-url",
            url,
            "--out",
            str(tmp_path / "r"),
        )
    assert isinstance(result.exception, ForgeError) and result.exception.exit_code == 1
    assert "cannot chat with model 'qwen-7b' (HTTP 404: The model `qwen-7b` does not exist.)" in str(
        result.exception
    )
    assert result.exception.hint == "it serves: m; name one of them in --model"
    assert not (tmp_path / "r").exists()


def test_a_chat_request_that_hangs_is_reported_not_waited_on_forever():
    hold = Hold(marker="Reply with OK.")
    with recording_server(hold=hold) as (url, _seen):
        failure = chat_failure("openai-api/rec/m", url, {"api_key": "test"}, "the model endpoint", timeout=2)
    assert isinstance(failure, ForgeError)
    assert failure.message == "the model endpoint did not answer a 1-token chat request within 2 s"
    assert len(hold.held) == 1 and hold.held[0]["max_tokens"] == 1


def test_an_endpoint_that_fails_mid_run_stops_the_run_and_keeps_what_finished(tmp_path, monkeypatch):
    monkeypatch.setenv("REC_API_KEY", "test")
    monkeypatch.setenv("INSPECT_DISPLAY", "none")
    # Inspect's own backoff (5 retries, ~1.5 min per call) is what a transient outage needs; here
    # the outage is permanent, so the test spares itself the wait
    monkeypatch.setattr(_execute, "_MAX_RETRIES", 0)
    out = tmp_path / "run"
    args = ["probe", "--seeds", "2", "--epochs", "2", "--max-connections", "1", "--model", "openai-api/rec/m"]
    outage = Outage(after=5)
    with recording_server(outage=outage) as (url, seen):
        result = _invoke(*args, "--model-base-url", url, "--out", str(out))
        assert isinstance(result.exception, ForgeError), result.output
        message = str(result.exception)
        assert message.startswith(
            f"the model endpoint {url} fails on chat requests (HTTP 503: the model is overloaded); the run "
            "stopped, 5 finished samples are kept"
        ), message
        assert "re-run the same command: it resumes where it stopped" in message
        assert len(seen) == 5 and _finished(out / "logs") == 5
        # the server is back: the same command runs only the 12 - 5 samples that had not finished
        outage.after = 10**9
        again = _invoke(*args, "--model-base-url", url, "--out", str(out))
    assert again.exception is None, again.output
    assert len(seen) == 12


@pytest.mark.parametrize("model", [None, "openai-api/rec/m"])
def test_an_unknown_model_argument_is_a_usage_error_listing_the_valid_ones(tmp_path, monkeypatch, model):
    monkeypatch.setenv("REC_API_KEY", "test")
    with recording_server() as (url, seen):
        extra = ["--model", model, "--model-base-url", url] if model else []
        result = _invoke("probe", "-M", "colour=blue", *extra, "--out", str(tmp_path / "run"))
    assert isinstance(result.exception, UsageError), result.exception
    message = str(result.exception)
    assert result.exception.exit_code == 2 and message.startswith(
        "-M colour is not an argument of openai-api/"
    )
    valid = message.split("Valid -M keys: ")[1].split("\n")[0].split(", ")
    assert {"api_key", "client_timeout", "emulate_tools", "max_retries", "default_headers"} <= set(valid)
    assert "colour" not in valid and seen == []
    assert not (tmp_path / "run").exists()


def test_a_model_argument_inspect_sets_itself_is_named_as_such(tmp_path, monkeypatch):
    monkeypatch.setenv("REC_API_KEY", "test")
    with recording_server() as (url, _seen):
        args = ["-M", "timeout=5", "--model", "openai-api/rec/m", "--model-base-url", url]
        result = _invoke("probe", *args, "--out", str(tmp_path / "r"))
    assert isinstance(result.exception, UsageError)
    assert str(result.exception).startswith("-M timeout is set by Inspect itself for openai-api/rec/m")


def test_a_partial_run_exits_1_naming_the_first_failed_sample(tmp_path, monkeypatch):
    monkeypatch.setenv("REC_API_KEY", "test")
    monkeypatch.setenv("INSPECT_DISPLAY", "none")
    out = tmp_path / "run"
    with recording_server(fail_if_contains=["Say 42."]) as (url, _seen):
        args = ["probe", "--seeds", "1", "--epochs", "1", "--model", "openai-api/rec/m"]
        result = _invoke(*args, "--model-base-url", url, "--out", str(out))
    assert isinstance(result.exception, ForgeError) and result.exception.exit_code == 1, result.output
    assert result.exception.message == (
        "the run is partial: 1 sample failed; first: seed 0 task forty-two: "
        "BadRequestError('Error code: 400 - injected failure')"
    )
    assert result.exception.hint == "re-run the same command: it runs only what is missing"
    assert "success_rate" in result.output  # the headline of what finished comes first
