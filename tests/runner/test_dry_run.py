"""`forge-eval run --dry-run`: the tasks and skips a real run would select, nothing started or created."""

import json
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

import tests.runner._probe_benchmark  # noqa: F401  (registers the "probe" and "judged-probe" benchmarks)
from forge_eval._cli.main import cli
from forge_eval._errors import ForgeError, UnknownNameError, UsageError
from forge_eval.benchmarks import BENCHMARKS, NothingRunnableError
from forge_eval.rundir import RunDir
from forge_eval.runner import RunSpec, plan_run, plan_shards
from tests.conftest import BENCHMARK_DATA, UPSTREAM_TREES, shared_copy

ROOT = Path(__file__).resolve().parents[2]
#: Per shipped benchmark: its --data-dir (a shared copy) and options a run here needs (a judge that
#: needs no key: the embedded model).
SHIPPED: dict[str, tuple[Path | None, tuple[str, ...]]] = {
    "forgelab": (None, ()),
    "weblab": (None, ()),
    "osworld": (UPSTREAM_TREES / "ljxpython+OSWorldUse@f6cee71", ()),
    "claweval": (UPSTREAM_TREES / "claw-eval+claw-eval@9365e1a", ("--judge", "qwen-0.5b")),
    "qwenclawbench": (BENCHMARK_DATA / "qwenclawbench", ("--judge", "qwen-0.5b")),
    "mcpatlas": (BENCHMARK_DATA / "mcpatlas", ("--judge", "qwen-0.5b")),
    "webvoyager": (BENCHMARK_DATA / "webvoyager", ("--judge", "qwen-0.5b")),
    "online_mind2web": (BENCHMARK_DATA / "online_mind2web", ("--judge", "qwen-0.5b")),
}


def _invoke(*args: str):
    return CliRunner().invoke(cli, ["run", *args], standalone_mode=False, catch_exceptions=True)


def _dry_json(*args: str) -> tuple[dict, BaseException | None]:
    result = _invoke(*args, "--dry-run", "--json")
    if result.exception is not None and not isinstance(result.exception, ForgeError):
        raise result.exception
    return json.loads(result.output), result.exception


def test_every_shipped_benchmark_has_a_dry_run_case() -> None:
    shipped = {p.name for p in (ROOT / "benchmarks").iterdir() if (p / "__init__.py").is_file()}
    registered = shipped & set(BENCHMARKS.names())
    assert registered == set(SHIPPED)


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_dry_run_lists_what_the_selection_chooses(tmp_path: Path, name: str) -> None:
    data, extra = SHIPPED[name]
    if data is not None:
        extra = (*extra, "--data-dir", str(shared_copy(data, f"{name} data")))
    out = tmp_path / "run"
    plan, error = _dry_json(name, "--seeds", "2", "--limit", "2", "--out", str(out), *extra)

    selection = BENCHMARKS.get(name).selection(data.resolve() if data else None)
    runnable = [str(s.id) for s in selection.samples]
    assert plan["task_ids"] == runnable[:2] and plan["beyond_limit"] == runnable[2:]
    assert plan["skipped"] == selection.skipped and plan["n_chosen"] == selection.n_total
    assert sum(plan["skipped_by_reason"].values()) == len(selection.skipped)
    assert [s["seed"] for s in plan["seeds"]] == [0, 1]
    assert all(s["task_ids"] == runnable[:2] for s in plan["seeds"])
    assert plan["samples"] == 2 * len(runnable[:2]) * plan["epochs"]
    # The run would stop here only with the error the dry run raises after its plan (same exit status).
    assert plan["would_run"] == (error is None)
    if error is not None:
        assert plan["blockers"][0]["message"] == error.message
    assert list(tmp_path.iterdir()) == []


def test_an_endpoint_is_never_contacted_and_nothing_is_created(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("VLLM_API_KEY", "test")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        url = f"http://127.0.0.1:{server.getsockname()[1]}/v1"
        model = ("--model", "openai-api/vllm/m", "--model-base-url", url)
        out = tmp_path / "a" / "run"
        plan, error = _dry_json("probe", *model, "--out", str(out), "--cluster", "local", "--shards", "3")
        assert error is None and plan["would_run"]
        with pytest.raises(BlockingIOError):
            server.accept()  # no connection is waiting: the dry run never reached the endpoint
        # The real plan does contact it (the control: the check above can fail).
        spec = RunSpec("probe", (0, 1, 2), out, model="openai-api/vllm/m", model_base_url=url)
        with pytest.raises(ForgeError, match="does not answer"):
            plan_run(spec)
        server.accept()[0].close()
    assert list(tmp_path.iterdir()) == []
    # The shards are the real run's plan.
    real = plan_shards(plan_run(spec, dry_run=True), 3)
    assert [s["key"] for s in plan["shards"]["shards"]] == [s.key for s in real]
    assert [s["task_ids"] for s in plan["shards"]["shards"]] == [list(s.task_ids) for s in real]
    assert plan["shards"]["where"] == "local"


def test_text_lists_tasks_and_each_skip_with_its_reason(tmp_path: Path) -> None:
    rows = [
        {"id": "a", "input": "x", "target": "1"},
        {"id": "b", "input": "y", "target": "2", "needs": "a GPU"},
        {"id": "c", "input": "z", "target": "3"},
    ]
    (tmp_path / "tasks.json").write_text(json.dumps(rows))
    before = sorted(tmp_path.iterdir())
    args = ("judged-probe", "--data-dir", str(tmp_path), "--judge", "qwen-0.5b", "--epochs", "3")
    result = _invoke(*args, "--dry-run")
    assert result.exception is None, result.output
    text = result.output
    assert "seeds 0, 1, 2: each runs 2 tasks x 3 epochs = 18 samples in all" in text
    assert "tasks:   3 chosen, 2 runnable here, 1 skipped" in text
    assert "\n  a\n  c\n" in text
    assert "  b: needs a GPU, not available here" in text
    assert "(the run creates it)" in text
    assert sorted(tmp_path.iterdir()) == before


def test_nothing_runnable_shows_the_plan_then_the_real_runs_error(tmp_path: Path) -> None:
    rows = [{"id": "b", "input": "y", "target": "2", "needs": "a GPU"}]
    (tmp_path / "tasks.json").write_text(json.dumps(rows))
    args = ("judged-probe", "--data-dir", str(tmp_path), "--judge", "qwen-0.5b", "--out", str(tmp_path / "r"))
    plan, error = _dry_json(*args)
    assert isinstance(error, NothingRunnableError) and error.exit_code == 2
    assert plan["skipped"] == {"b": "needs a GPU, not available here"} and not plan["would_run"]
    real = _invoke(*args)
    assert type(real.exception) is type(error) and str(real.exception) == str(error)
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (("nosuch",), UnknownNameError),
        (("probe", "-T", "bogus=1"), UnknownNameError),
        (("probe", "--harness", "nosuch"), UnknownNameError),
        (("probe", "--shards", "2"), UsageError),
        (("probe", "--cluster", "nosuch://x"), UnknownNameError),
        (("probe", "--model", "nonexistent/x"), UsageError),
    ],
)
def test_bad_options_give_the_real_runs_error(tmp_path: Path, args: tuple[str, ...], error) -> None:
    out = ("--out", str(tmp_path / "run"))
    dry = _invoke(*args, *out, "--dry-run")
    real = _invoke(*args, *out)  # refused before anything starts
    assert isinstance(dry.exception, error), dry.output
    assert type(real.exception) is type(dry.exception) and str(real.exception) == str(dry.exception)
    assert list(tmp_path.iterdir()) == []


def test_unknown_benchmark_lists_the_valid_names() -> None:
    result = _invoke("nosuch", "--dry-run", "--json")
    assert isinstance(result.exception, UnknownNameError)
    for name in SHIPPED:
        assert name in str(result.exception)


def test_json_needs_dry_run() -> None:
    result = _invoke("probe", "--json")
    assert isinstance(result.exception, UsageError) and "--json applies to --dry-run" in str(result.exception)


def test_a_harness_matrix_plans_each_harness_in_its_own_run_directory(tmp_path: Path) -> None:
    out = tmp_path / "matrix"
    plan, _error = _dry_json("probe", "--harness", "react,codex", "--out", str(out))
    runs = plan["harnesses"]
    assert [r["harness"] for r in runs] == ["react", "codex"]
    assert [r["out"] for r in runs] == [str(out / "harnesses" / "react"), str(out / "harnesses" / "codex")]
    assert runs[0]["task_ids"] == runs[1]["task_ids"]
    assert list(tmp_path.iterdir()) == []


def test_an_earlier_run_is_read_not_changed(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    marker = RunDir(out).run_marker
    marker.write_text(json.dumps({"identity": {"benchmark": "forgelab"}, "seeds": [0]}))
    refused = _invoke("probe", "--out", str(out), "--dry-run").exception
    assert isinstance(refused, UsageError) and "already holds a different run" in str(refused)
    marker.write_text(json.dumps({"identity": {"benchmark": "probe"}, "seeds": [0]}))
    plan, error = _dry_json("probe", "--out", str(out))
    assert error is None and plan["out_exists"] and plan["finished_before"] == 0
    assert [p.name for p in out.iterdir()] == [marker.name]


def test_an_unknown_osworld_provider_is_refused_with_the_valid_names(tmp_path: Path) -> None:
    tree = shared_copy(SHIPPED["osworld"][0], "the pinned OSWorld tree")
    args = ("osworld", "-T", "provider=kvm", "--data-dir", str(tree), "--out", str(tmp_path / "run"))
    refused = _invoke(*args, "--dry-run").exception
    assert isinstance(refused, UnknownNameError)
    assert "Valid OSWorld providers: docker, local, podman, vm" in str(refused)
    assert list(tmp_path.iterdir()) == []
