"""`-T KEY=VALUE`: an option the benchmark's task function does not take is a one-line usage error (exit 2)
given before anything is created; the valid options come from the function's signature."""

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import tests.runner._probe_benchmark  # noqa: F401  (registers the "probe" benchmark)
from forge_eval._cli.main import cli
from forge_eval._errors import UnknownNameError, UsageError
from forge_eval.benchmarks import BENCHMARKS, Benchmark
from tests.runner._recording_server import recording_server

FORGE = Path(sys.executable).with_name("forge-eval")


@pytest.fixture
def rec_model(monkeypatch):
    with recording_server() as (url, seen):
        monkeypatch.setenv("REC_API_KEY", "test")
        yield url, seen


def test_unknown_option_is_one_line_exit_2_and_creates_nothing(tmp_path, rec_model):
    url, seen = rec_model
    out = tmp_path / "a" / "run"
    command = [str(FORGE), "run", "forgelab", "-T", "nosuch=1", "--seeds", "1", "--out", str(out)]
    command += ["--model", "openai-api/rec/m", "--model-base-url", url]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        "error: unknown forgelab task option 'nosuch'. Valid forgelab task options: "
        "data_dir, max_tokens, message_limit, subset, task_ids, time_limit"
    ]
    assert list(tmp_path.iterdir()) == []
    assert seen == []  # refused before any model call


def test_unknown_option_leaves_an_existing_out_dir_as_it_was(tmp_path, rec_model):
    out = tmp_path / "run"
    out.mkdir()
    (out / "mine.txt").write_text("kept")
    args = ["run", "probe", "-T", "task_ids=forty-two", "-T", "nosuch=1", "--out", str(out)]
    args += ["--model", "openai-api/rec/m", "--model-base-url", rec_model[0]]
    result = CliRunner().invoke(cli, args, standalone_mode=False, catch_exceptions=True)
    assert isinstance(result.exception, UnknownNameError), result.exception
    assert result.exception.exit_code == 2
    assert str(result.exception) == "unknown probe task option 'nosuch'. Valid probe task options: task_ids"
    assert [p.name for p in out.iterdir()] == ["mine.txt"]


@pytest.mark.parametrize(("key", "flag"), [("seed", "--seeds and --seed-base"), ("harness", "--harness")])
def test_options_the_run_sets_itself_name_their_own_flag(tmp_path, key, flag):
    result = CliRunner().invoke(
        cli, ["run", "probe", "-T", f"{key}=1", "--out", str(tmp_path / "run")], standalone_mode=False
    )
    assert isinstance(result.exception, UsageError), result.exception
    assert result.exception.exit_code == 2
    assert str(result.exception) == f"-T {key}: the run sets each task's {key}; use {flag} instead"
    assert list(tmp_path.iterdir()) == []


def test_valid_options_follow_the_task_functions_signature():
    assert BENCHMARKS.get("forgelab").task_options() == [
        "subset",
        "task_ids",
        "message_limit",
        "time_limit",
        "max_tokens",
        "data_dir",
    ]

    def any_task(seed: int = 0, harness: str = "react", **options):
        return None

    class AnyOptions(Benchmark):
        name = "any-options"
        task_function = any_task

    assert AnyOptions().task_options() is None  # a function taking **kwargs takes any option
