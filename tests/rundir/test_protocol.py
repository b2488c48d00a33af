"""The protocol record: when two sides are the same, when a run is comparable, and that a results.json
cannot claim otherwise."""

import hashlib
import json
from pathlib import Path

import pytest

from forge_eval import ForgeError
from forge_eval.rundir import (
    ELEMENTS,
    NotUsed,
    Ours,
    ProtocolRecord,
    RunResults,
    Unpinned,
    Upstream,
    Value,
    differences,
    element,
    load_results,
    same,
    write_results,
)

UPSTREAM = {"repo": "claw-eval/claw-eval", "commit": "9365e1a"}


def _upstream_tree(tmp_path: Path, text: str = "You are a helpful assistant.") -> Path:
    (tmp_path / "src").mkdir(parents=True, exist_ok=True)
    (tmp_path / "src" / "prompt.py").write_text(text)
    return tmp_path


def test_upstream_file_is_hashed_from_the_tree_and_a_missing_file_is_an_error(tmp_path: Path) -> None:
    tree = _upstream_tree(tmp_path)
    source = Upstream.file(tree, path="src/prompt.py", symbol="build_prompt", **UPSTREAM)
    assert source.sha256 == hashlib.sha256(b"You are a helpful assistant.").hexdigest()
    assert source.ref == "claw-eval/claw-eval@9365e1a:src/prompt.py (build_prompt)"
    with pytest.raises(ForgeError, match="no file src/missing.py"):
        Upstream.file(tree, path="src/missing.py", **UPSTREAM)


def test_same_compares_values_then_texts_and_never_takes_ours_for_upstream(tmp_path: Path) -> None:
    text = "You are a helpful assistant."
    upstream = Upstream.file(_upstream_tree(tmp_path), path="src/prompt.py", **UPSTREAM)
    assert same(upstream, Upstream.text(text, path="src/prompt.py", **UPSTREAM))
    assert not same(upstream, Upstream.text(text + " ", path="src/prompt.py", **UPSTREAM))
    assert not same(upstream, Ours(what="our paraphrase of upstream's prompt"))
    assert same(upstream, Ours.text("a copy", text))  # byte-identical text is the same text
    assert same(Value(value={"a": 1, "b": [0.0]}), Value(value={"b": [0.0], "a": 1}))
    assert not same(Value(value={"temperature": 0.0}), Value(value={}))
    # a setting read from upstream's config against the value the run sent
    config = Upstream.text("temperature: 0", path="config.yaml", value={"temperature": 0}, **UPSTREAM)
    assert same(config, Value(value={"temperature": 0})) and not same(config, Value(value={"temperature": 1}))
    assert same(Unpinned(what="any Chromium"), Value(value="Chromium 156"))
    assert same(NotUsed(why="no judge"), NotUsed(why="no LLM judge"))
    assert not same(NotUsed(why="no judge"), Value(value="openai/gpt-4o"))


def _complete(**changes: object) -> list:
    elements = {kind: element(kind, Ours(what=kind)) for kind in ELEMENTS}
    elements.update(changes)
    return list(elements.values())


def test_comparable_only_when_every_kind_is_recorded_and_matches() -> None:
    assert ProtocolRecord(elements=_complete()).comparable is True
    missing = ProtocolRecord(elements=_complete()[:-1])
    assert missing.comparable is False and missing.reasons == ["not recorded: data revision and checksum"]
    sampling = element("agent_sampling", Value(value={"temperature": 0}), Value(value={"temperature": 0.7}))
    differs = ProtocolRecord(elements=_complete(agent_sampling=sampling))
    assert differs.comparable is False
    assert differs.reasons == [
        'agent sampling settings differs: official {"temperature":0}; this run {"temperature":0.7}'
    ]
    sandbox = element(
        "environment",
        Ours(what="upstream's Docker image"),
        Ours(what="bubblewrap"),
        equivalent="the same tools and files; only the isolation differs",
    )
    record = ProtocolRecord(elements=_complete(environment=sandbox))
    assert record.comparable is True and record.of("environment")[0].same is False
    why = "protocol record not yet filled: prompts are ours"
    pending = ProtocolRecord(elements=_complete(), pending=why)
    assert pending.comparable is False and pending.reasons == [why]


def _results(protocol: ProtocolRecord | dict) -> dict:
    record = protocol.model_dump(mode="json") if isinstance(protocol, ProtocolRecord) else protocol
    return {
        "benchmark": "b",
        "model": "m",
        "harness": "react",
        "seeds": [0],
        "epochs": 1,
        "status": "complete",
        "metrics": {},
        "protocol": record,
    }


def test_results_json_round_trips_the_record_and_refuses_a_false_claim(tmp_path: Path) -> None:
    sampling = element("agent_sampling", Value(value={"temperature": 0}), Value(value={}))
    record = ProtocolRecord(elements=_complete(agent_sampling=sampling))
    write_results(tmp_path, RunResults.model_validate(_results(record)))
    loaded = load_results(tmp_path)
    assert loaded.protocol == record and loaded.comparable is False

    claimed = json.loads((tmp_path / "results.json").read_text())
    claimed["protocol"]["comparable"] = True
    (tmp_path / "results.json").write_text(json.dumps(claimed))
    with pytest.raises(ForgeError, match="protocol says comparable=True, but its elements say False"):
        load_results(tmp_path)
    claimed["protocol"]["comparable"] = None
    claimed["protocol"]["elements"][3]["same"] = True  # agent_sampling: 0 vs the model's default
    (tmp_path / "results.json").write_text(json.dumps(claimed))
    with pytest.raises(ForgeError, match="'agent_sampling' says same=True"):
        load_results(tmp_path)


def test_results_without_a_record_are_read_but_not_comparable(tmp_path: Path) -> None:
    data = _results({})
    del data["protocol"]
    (tmp_path / "results.json").write_text(json.dumps(data))
    assert load_results(tmp_path).comparable is False


def test_differences_name_what_each_run_used() -> None:
    a = ProtocolRecord(elements=_complete())
    judge = element("judge_model", Value(value="openai/gpt-4o"), Value(value="qwen-0.5b"))
    b = ProtocolRecord(elements=_complete(judge_model=judge))
    assert differences(a, a) == []
    assert differences(a, b) == ['judge model: baseline ours: judge_model; run "qwen-0.5b"']
    assert differences(None, b) == ["the baseline has no protocol record (written by an older forge-eval)"]
