"""Durability and compaction of the records: a `kill -9` loses no delivered call; Parquet matches JSONL."""

import os
import signal
import threading
import time

import httpx
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from forge_eval._cli.proxy import proxy as proxy_cli
from forge_eval.proxy import free_port, read_calls, read_rollout
from tests.proxy.conftest import ADMIN, start_cli_proxy


@pytest.mark.parametrize("durability", ["page-cache", "fsync"])
def test_kill_9_loses_no_delivered_call(upstream, scripted, tmp_path, durability):
    port, control_port = free_port(), free_port()
    records = tmp_path / "records"
    process = start_cli_proxy(upstream[1].url, records, port, control_port, "--durability", durability)
    url = f"http://127.0.0.1:{port}"
    try:
        control = f"http://127.0.0.1:{control_port}"
        key = httpx.post(control + "/rollouts", json={"rollout_id": "k9"}, headers=ADMIN).json()["api_key"]
        scripted.delay_s = 0.002
        delivered: list[str] = []
        lock = threading.Lock()

        def worker(n: int) -> None:
            with httpx.Client(timeout=10) as client:
                for i in range(1000):
                    tag = f"w{n}-{i}"
                    body = {
                        "model": "m",
                        "stream": i % 2 == 0,
                        "messages": [{"role": "user", "content": tag}],
                    }
                    try:
                        answer = client.post(
                            url + "/v1/chat/completions",
                            json=body,
                            headers={"Authorization": f"Bearer {key}"},
                        )
                        complete = answer.status_code == 200 and (
                            not body["stream"] or answer.text.endswith("data: [DONE]\n\n")
                        )
                    except httpx.HTTPError:
                        return
                    if complete:
                        with lock:
                            delivered.append(tag)

        workers = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
        for w in workers:
            w.start()
        deadline = time.monotonic() + 30
        while len(delivered) < 150 and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(process.pid, signal.SIGKILL)  # while calls are in flight
        for w in workers:
            w.join(timeout=15)
    finally:
        process.kill()
        process.wait()
    assert len(delivered) >= 150
    recorded = {c.original_request["messages"][0]["content"] for c in read_calls(records, "k9")}
    missing = set(delivered) - recorded
    assert not missing, f"{len(missing)} delivered calls have no record, e.g. {sorted(missing)[:5]}"
    seqs = [c.seq for c in read_calls(records, "k9")]
    assert len(seqs) == len(set(seqs))


def test_compact_writes_parquet_matching_the_jsonl(proxy):
    for rollout_id, status in (("done", "exited"), ("running", None)):
        created = proxy.rollout(rollout_id, group_uid="g")
        for stream in (False, True):
            body = {"model": "m", "stream": stream, "messages": [{"role": "user", "content": rollout_id}]}
            httpx.post(
                proxy.url + "/v1/chat/completions",
                json=body,
                headers={"Authorization": f"Bearer {created['api_key']}"},
            )
        if status:
            proxy.admin("POST", f"/rollouts/{rollout_id}/status", json={"status": status, "exit_code": 0})
    out = proxy.records.parent / "parquet"
    result = CliRunner().invoke(proxy_cli, ["compact", str(proxy.records), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "4 calls" in result.output
    table = pq.read_table(out / "calls.parquet")
    assert table.schema.field("prompt_token_ids").type.value_type == pa.int32()
    assert table.schema.field("completion_logprobs").type.value_type == pa.float32()
    rows = table.to_pylist()
    jsonl = read_calls(proxy.records, "done") + read_calls(proxy.records, "running")
    assert sorted(r["call_id"] for r in rows) == sorted(c.call_id for c in jsonl)
    by_id = {r["call_id"]: r for r in rows}
    for call in jsonl:
        assert by_id[call.call_id]["completion_token_ids"] == call.completion_token_ids
        assert by_id[call.call_id]["seq"] == call.seq and by_id[call.call_id]["stream"] == call.stream
    rollouts = pq.read_table(out / "rollouts.parquet").to_pylist()
    assert {r["rollout_id"]: r["termination"] for r in rollouts}["done"] == "completed"
    assert read_rollout(proxy.records, "done").n_calls == 2

    finished = CliRunner().invoke(
        proxy_cli, ["compact", str(proxy.records), "--out", str(out), "--finished-only"]
    )
    assert "2 calls" in finished.output and "1 running skipped" in finished.output
    missing = CliRunner().invoke(proxy_cli, ["compact", str(proxy.records / "nope")], standalone_mode=False)
    assert "no records directory" in str(missing.exception)
