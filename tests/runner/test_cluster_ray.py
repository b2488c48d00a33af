"""`forge-eval run --cluster ray:...` on a real Ray cluster on this machine: a head without CPUs and
worker raylets (`ray.cluster_utils.Cluster`), the forgelab benchmark, a scripted model over HTTP on
127.0.0.1 (the recording server: a worker is its own process, so the model must be reachable by URL).

Each test's cluster is shut down by its fixture (never `ray stop`: other people's Ray runs here too).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import psutil
import pytest
from inspect_ai.log import read_eval_log

from forge_eval._errors import ForgeError
from forge_eval.runner import RunSpec, plan_run
from forge_eval.runner.executors import RayExecutor, executor_for
from forge_eval.runner.executors._executor import Executor
from tests.runner._recording_server import Hold, recording_server

ray_cluster_utils = pytest.importorskip("ray.cluster_utils")

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

MODEL = "openai-api/rec/m"
# A task of the second slice of forgelab's quick subset (refuse-mass-delete).
HELD = "Auditors arrive tomorrow"
# A lost node is noticed within ~2 s instead of Ray's default ~30 s.
FAST_HEALTH = {
    "health_check_initial_delay_ms": 0,
    "health_check_period_ms": 500,
    "health_check_failure_threshold": 3,
}


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REC_API_KEY", "test")


def _cluster(*workers: dict[str, Any]) -> Any:
    cluster = ray_cluster_utils.Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 0, "include_dashboard": False, "_system_config": FAST_HEALTH},
    )
    nodes = [cluster.add_node(num_cpus=1, **worker) for worker in workers]
    cluster.wait_for_nodes()
    return cluster, nodes


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[Any, Any, Any]]:
    """A head and two workers: `plain` (1 CPU) and `browser` (1 CPU and a `browser` slot)."""
    os.environ.pop("RAY_ADDRESS", None)
    made, (plain, browser) = _cluster({}, {"resources": {"browser": 1}})
    try:
        yield made, plain, browser
    finally:
        made.shutdown()


def _spec(
    url: str, out: Path, benchmark: str = "forgelab", seeds: tuple[int, ...] = (0, 1), **kw: Any
) -> RunSpec:
    """`benchmark`'s quick subset, one epoch, against the recording server at `url`."""
    return RunSpec(benchmark, seeds, out, epochs=1, model=MODEL, model_base_url=url, quick=True, **kw)


def _run(spec: RunSpec, executor: Executor, shards: int) -> dict[str, Any]:
    from forge_eval.runner import execute_sharded

    return execute_sharded(plan_run(spec), executor, shards).results


def _trials(out: Path) -> pd.DataFrame:
    return pd.read_csv(out / "trials.csv").sort_values(["task_id", "seed", "epoch"]).reset_index(drop=True)


def _shards(out: Path) -> dict[str, dict[str, Any]]:
    return json.loads((out / "shards.json").read_text())


def test_shards_on_two_workers_give_the_local_trials(cluster, tmp_path: Path) -> None:
    made, plain, browser = cluster
    with recording_server() as (url, _seen):
        local = _run_local(_spec(url, tmp_path / "local"))
        results = _run(_spec(url, tmp_path / "ray"), executor_for(f"ray:{made.address}"), shards=4)
    assert results["status"] == "complete"
    assert local["status"] == "complete"
    shards = _shards(tmp_path / "ray")
    assert len(shards) == 4 and all(s["status"] == "finished" for s in shards.values())
    # both workers ran shards; forgelab needs no browser, but may use the browser node's CPU
    assert {s["node"] for s in shards.values()} == {plain.node_id, browser.node_id}
    columns = ["task_id", "seed", "epoch", "score", "passed", "error", "model_turns"]
    ours, theirs = _trials(tmp_path / "ray")[columns], _trials(tmp_path / "local")[columns]
    assert len(ours) == 2 * 8
    pd.testing.assert_frame_equal(ours, theirs)
    # the logs came back through the object store into the run directory
    assert len(list((tmp_path / "ray" / "logs" / "shards").glob("*/*.eval"))) == 4


def _run_local(spec: RunSpec) -> dict[str, Any]:
    from forge_eval.runner import execute

    return execute(plan_run(spec), display="none").results


def test_a_browser_shard_lands_only_on_the_browser_node(cluster, tmp_path: Path) -> None:
    made, _plain, browser = cluster
    executor = executor_for(f"ray:{made.address}")
    try:
        with pytest.raises(ForgeError, match="offers 'desktop', which a osworld sample needs"):
            executor.check({"CPU": 1.0, "desktop": 1.0}, "osworld")
        assert executor.capacity({"CPU": 1.0, "browser": 1.0}) == 1
        assert executor.capacity({"CPU": 1.0}) == 2
    finally:
        executor.close()
    with recording_server() as (url, _seen):
        spec = _spec(url, tmp_path / "web", "weblab", seeds=(0,), harness="react", limit=2)
        _run(spec, executor_for(f"ray:{made.address}"), shards=2)
    shards = _shards(tmp_path / "web")
    assert len(shards) == 2
    assert {s["node"] for s in shards.values()} == {browser.node_id}


def _holder(nodes: list[Any], port: int) -> Any:
    """The node whose worker made the held request: its process has the connection from client `port`."""
    for node in nodes:
        raylet = psutil.Process(node.all_processes["raylet"][0].process.pid)
        for process in raylet.children(recursive=True):
            try:
                if any(c.laddr and c.laddr.port == port for c in process.net_connections(kind="tcp")):
                    return node
            except psutil.NoSuchProcess:
                continue
    return None


def test_a_lost_node_is_retried_elsewhere_and_nothing_is_counted_twice(tmp_path: Path) -> None:
    os.environ.pop("RAY_ADDRESS", None)
    made, nodes = _cluster({}, {})
    out = tmp_path / "run"
    hold = Hold(marker=HELD)
    try:
        with recording_server(hold=hold) as (url, _seen):
            executor = RayExecutor(made.address, shared=True)  # the retry resumes the lost node's log
            result: dict[str, Any] = {}
            spec = _spec(url, out, seeds=(0,))
            runner = threading.Thread(target=lambda: result.update(_run(spec, executor, 2)))
            runner.start()
            deadline = time.monotonic() + 120
            while not hold.held and time.monotonic() < deadline:
                time.sleep(0.2)
            assert hold.held, "no shard reached the held task"
            victim = _holder(nodes, hold.peers[0][1])
            assert victim is not None
            raylet = psutil.Process(victim.all_processes["raylet"][0].process.pid)
            doomed = [raylet, *raylet.children(recursive=True)]
            raylet.send_signal(signal.SIGKILL)
            hold.release.set()
            runner.join(timeout=240)
            assert not runner.is_alive()
        survivor = next(n for n in nodes if n is not victim)
        assert result["status"] == "complete"
        trials = _trials(out)
        assert len(trials) == 8 and not trials.duplicated(["task_id", "seed", "epoch"]).any()
        assert trials["error"].isna().all()
        lost = next(s for s in _shards(out).values() if "refuse-mass-delete" in s["task_ids"])
        assert lost["node"] == survivor.node_id and lost["status"] == "finished"
        time.sleep(2)
        alive = [p for p in doomed if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        assert not alive, [(p.pid, p.name()) for p in alive]
    finally:
        made.shutdown()


_CLI = "from forge_eval._cli.main import main; main()"


def test_a_killed_driver_resumes_without_rerunning_finished_shards(cluster, tmp_path: Path) -> None:
    made, _plain, _browser = cluster
    out = tmp_path / "run"
    hold = Hold(marker=HELD)
    env = {**os.environ, "INSPECT_DISPLAY": "none", "FORGE_CLUSTER": f"ray:{made.address}"}
    root = Path(__file__).resolve().parents[2]
    with recording_server(hold=hold) as (url, seen):
        args = [sys.executable, "-c", _CLI, "run", "forgelab", "--quick", "--seeds", "2", "--epochs", "1"]
        args += ["--model", MODEL, "--model-base-url", url, "--out", str(out), "--shards", "4"]
        first = subprocess.Popen(args, cwd=root, env=env, start_new_session=True, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:  # two shards finish; the two with the held task wait
            done = _shards(out) if (out / "shards.json").is_file() else {}
            if len(done) == 2 and len(hold.held) == 2:
                break
            time.sleep(0.3)
        assert len(done) == 2 and len(hold.held) == 2, (done, hold.held)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
        time.sleep(3)  # Ray ends a dead driver's tasks
        hold.release.set()
        before = len(seen)
        second = subprocess.run(args, cwd=root, env=env, capture_output=True, text=True, timeout=300)
        again = seen[before:]
    assert second.returncode == 0, second.stderr
    assert "2 finished earlier, 2 to run" in second.stderr
    after = _shards(out)
    assert all(after[key]["started"] == done[key]["started"] for key in done)  # not re-run
    finished_tasks = {(done[k]["seed"], t) for k in done for t in done[k]["task_ids"]}
    prompts = _prompts()
    rerun = {(body["seed"], prompts[_user_text(body)]) for body in again if _user_text(body) in prompts}
    assert rerun and not rerun & finished_tasks
    trials = _trials(out)
    assert len(trials) == 16 and not trials.duplicated(["task_id", "seed", "epoch"]).any()
    assert json.loads((out / "results.json").read_text())["status"] == "complete"


def _user_text(body: dict[str, Any]) -> str:
    first = next(m for m in body["messages"] if m["role"] == "user")
    content = first["content"]
    return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)


def _prompts() -> dict[str, str]:
    """forgelab's quick tasks: first user message -> task id."""
    from forge_eval.benchmarks import BENCHMARKS

    samples = BENCHMARKS.get("forgelab").load(task_ids=",".join(BENCHMARKS.get("forgelab").quick_subset))
    return {str(s.input): str(s.id) for s in samples}


def test_the_embedded_model_is_served_once_per_node(cluster, tmp_path: Path) -> None:
    """Four shards of an embedded-model run on two nodes: each node's shards share one server on the
    node's loopback (the logs name its URL), and no server outlives the run."""
    made, _plain, _browser = cluster
    # a few tokens a reply keep the samples short: what is measured is where the model is served
    spec = RunSpec("forgelab", (0, 1), tmp_path / "ray", epochs=1, model="smollm2", limit=2, max_tokens=8)
    results = _run(spec, executor_for(f"ray:{made.address}"), shards=4)
    assert results["status"] == "complete"
    shards = _shards(tmp_path / "ray")
    assert len(shards) == 4
    urls: dict[str, set[str]] = {}
    for key, shard in shards.items():
        (log,) = (tmp_path / "ray" / "logs" / "shards" / key).glob("*.eval")
        url = read_eval_log(str(log), header_only=True).eval.model_base_url
        assert url.startswith("http://127.0.0.1:")
        urls.setdefault(shard["node"], set()).add(url)
    assert all(len(served) == 1 for served in urls.values()), urls
    assert len({u for served in urls.values() for u in served}) == len(urls)
    for url in {u for served in urls.values() for u in served}:
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1].split("/")[0])), timeout=2)


@pytest.mark.parametrize(
    ("roles", "serves"),
    [
        ({"model": MODEL}, False),
        ({"model": MODEL, "judge": "openai-api/rec/judge"}, False),
        ({}, True),
        ({"model": "smollm2"}, True),
        ({"model": MODEL, "judge": "smollm2"}, True),
        ({"model": MODEL, "model_roles": {"user": "smollm2"}}, True),
    ],
)
def test_node_models_are_placed_only_for_a_run_that_serves_an_embedded_model(
    roles: dict[str, Any], serves: bool, tmp_path: Path
) -> None:
    """A `NodeModels` actor is a worker process of its own on every node: a run against an endpoint must
    not start one (on this 2-core machine two such processes importing forge-eval slowed every shard)."""
    from forge_eval.runner._shards import Shard
    from forge_eval.runner._worker import ShardJob
    from forge_eval.runner.executors._ray import _serves_embedded

    spec = RunSpec("forgelab", (0,), tmp_path, **roles)
    job = ShardJob(spec, Shard("seed0-1of1", 0, ("a",), 1), shared=True)
    assert _serves_embedded(job) is serves
