"""ForgeProxyAgentLoop on CPU against a hand-built Claude Code-shaped rollout (no GPU, no vLLM, no sandbox).

The proxy is a test double serving the hand-built call records of `tests/training/traffic.py`; the
backend is `InProcessTestBackend`, whose "harness" coroutine returns the verifier's outcome. Marked
`verl`: it imports veRL's AgentLoop classes.
"""

import asyncio
import os

import numpy as np
import pytest

from forge_eval._errors import UsageError
from forge_eval.proxy.records import CallRecord, RolloutRecord
from forge_eval.sandbox import RolloutOutcome
from forge_eval.training.backends import InProcessTestBackend
from tests.training._agent_loops import agent_loop_entry, forge_agent_loop, instantiate_agent_loop
from tests.training.traffic import claude_code_rollout

pytestmark = pytest.mark.verl


class RecordedProxy:
    """TEST DOUBLE of the proxy control plane: serves one hand-built rollout's calls."""

    def __init__(self, calls: list[CallRecord]) -> None:
        self.calls = calls
        self.created: list[dict] = []
        self.record: RolloutRecord | None = None

    async def create_rollout(self, fields):
        from forge_eval.proxy import ProxyRollout

        self.created.append(fields)
        self.record = RolloutRecord(**fields)
        return ProxyRollout(self.record, "fk.test.0.sig", f"/r/{fields['rollout_id']}/0")

    async def report(self, rollout_id, attempt, outcome):
        self.record.termination = outcome.status
        self.record.exit_code = outcome.exit_code
        self.record.reward = outcome.reward
        self.record.answer = outcome.answer

    async def release(self, rollout_id):
        self.released = rollout_id

    async def fetch(self, rollout_id, attempt):
        calls = [c.model_copy(update={"rollout_id": rollout_id}) for c in self.calls]
        return self.record.model_copy(update={"harness": "claude_code"}), calls


def _loop(proxy, outcome: RolloutOutcome, **options):
    async def harness(spec):
        return outcome

    backend = InProcessTestBackend(harness)
    loop = forge_agent_loop(
        {"prompt_length": 4096},
        name="forge_proxy_agent",
        backend=backend,
        proxy=proxy,
        proxy_url="http://127.0.0.1:8400",
        **options,
    )
    return loop, backend


ROW = {"uid": "task-7", "extra_info": {"forge_task": '{"task_id": "swe/task 7", "harness": "claude_code"}'}}


def _run(loop):
    return asyncio.run(loop.run({"temperature": 1.0, "top_p": 1.0, "logprobs": 1}, **ROW))


@pytest.mark.parametrize("merge", [True, False])
def test_outputs_carry_recorded_tokens_masks_logprobs_and_reward(merge):
    _, records, roles = claude_code_rollout()
    proxy = RecordedProxy(records)
    loop, backend = _loop(
        proxy, RolloutOutcome("completed", 0, 1.0, answer="done"), credit="masked", merge=merge
    )
    outputs = _run(loop)

    assert proxy.created[0]["group_uid"] == "task-7" and proxy.created[0]["sampling"] == {
        "temperature": 1.0,
        "top_p": 1.0,
    }
    spec = backend.started[0]
    assert spec.rollout_id.startswith("swe-task-7-")  # the task id, in the proxy's id alphabet
    assert (
        spec.proxy_base_url == f"http://127.0.0.1:8400/r/{spec.rollout_id}/0"
        and spec.harness == "claude_code"
    )
    by_id = {r.call_id: r for r in records}
    trained_ids = [r.call_id for r, role in zip(records, roles, strict=True) if role in ("action", "answer")]
    seen = []
    for out in outputs:
        call_ids = out.extra_fields["forge_call_ids"].split(",")
        chain = [by_id[c] for c in call_ids]
        assert out.prompt_ids == chain[0].prompt_token_ids
        assert (
            out.prompt_ids + out.response_ids == chain[-1].prompt_token_ids + chain[-1].completion_token_ids
        )
        mask = np.array(out.response_mask)
        response = np.array(out.response_ids)
        logprobs = np.array(out.response_logprobs)
        trained = [by_id[c] for c in call_ids if c in trained_ids]
        assert response[mask == 1].tolist() == [t for r in trained for t in r.completion_token_ids]
        assert logprobs[mask == 1] == pytest.approx([lp for r in trained for lp in r.completion_logprobs])
        expected = []  # sampled tokens keep their engine logprob (masked or not); inserted tokens get 0
        for prev, call in zip([None, *chain], chain, strict=False):
            gap = (
                0
                if prev is None
                else len(call.prompt_token_ids) - len(prev.prompt_token_ids) - len(prev.completion_token_ids)
            )
            expected += [0.0] * gap + call.completion_logprobs
        assert logprobs == pytest.approx(expected)
        assert out.reward_score == 1.0 and out.extra_fields["max_global_steps"] == 3
        seen += [c for c in call_ids if c in trained_ids]
    assert sorted(seen) == sorted(trained_ids)
    assert outputs[-1].extra_fields["forge_roles"].split(",")[-1] == "answer"
    rm = outputs[-1].as_dict()["rm_scores"]  # veRL's own conversion: the score at the last position
    assert rm[-1] == 1.0 and rm[:-1].abs().sum() == 0


def test_discarded_rollout_returns_empty_list():
    _, records, _ = claude_code_rollout()
    loop, backend = _loop(RecordedProxy(records), RolloutOutcome("timeout"))
    assert _run(loop) == []
    assert loop.discards == {"timeout": 1} and backend.stopped


@pytest.mark.parametrize("partial", ["zero", "mask", "carry"])
def test_partial_policy_decides_what_a_timed_out_rollout_returns(partial):
    _, records, roles = claude_code_rollout()
    loop, _ = _loop(RecordedProxy(records), RolloutOutcome("timeout"), credit="broadcast", partial=partial)
    outputs = _run(loop)
    if partial == "carry":  # nothing resumes a rollout under veRL: carry discards, and counts it
        assert outputs == [] and loop.discards == {"timeout": 1} and not loop.partial_kept
        return
    assert {o.reward_score for o in outputs} == {0.0} and loop.partial_kept == {f"{partial} timeout": 1}
    masks = [np.array(o.response_mask) for o in outputs]
    if partial == "zero":  # the prefix learns with reward 0: every sampled token of every call
        assert sum(int(m.sum()) for m in masks) == sum(len(r.completion_token_ids) for r in records)
    else:  # one output, the last call, nothing trainable: in its group's baseline (V1 reads its score)
        (out,) = outputs
        assert out.extra_fields["forge_call_ids"] == records[-1].call_id and not masks[0].any()
        assert out.response_ids == records[-1].completion_token_ids
        rm = out.as_dict()["rm_scores"]
        assert rm.abs().sum() == 0  # the score of 0 sits at the last position


def test_discounted_credit_is_refused_under_verl():
    from forge_eval.training.credit import credit_variant
    from forge_eval.training.verl import check_verl_credit

    with pytest.raises(UsageError, match="gamma 0.9 cannot be trained with veRL"):
        check_verl_credit(credit_variant("broadcast", gamma=0.9))


def test_yaml_registration_instantiates_the_loop_as_verl_does():
    """veRL's YAML route: the entry (with its `name`) is instantiated with keyword arguments per rollout."""
    from forge_eval.training.verl import AGENT_LOOP_TARGET, AGENT_NAME

    entry = agent_loop_entry()
    assert (entry.name, entry._target_) == (AGENT_NAME, AGENT_LOOP_TARGET)

    os.environ.setdefault("FORGE_PROXY_ADMIN_KEY", "test")
    assert type(instantiate_agent_loop(entry).backend).__name__ == "LocalBackend"  # `backend: local`
    entry.backend = {"_target_": "forge_eval.training.backends.InProcessTestBackend", "script": None}
    loop = instantiate_agent_loop(entry)
    assert type(loop).__name__ == "ForgeProxyAgentLoop" and loop.credit.name == "broadcast"
    assert loop.proxy.base_url == "http://127.0.0.1:8378"  # the file's control_url


def test_backend_failure_is_a_judged_crash_not_an_exception():
    _, records, _ = claude_code_rollout()
    proxy = RecordedProxy(records[:2])  # the harness died after two calls, before any answer

    async def broken(spec):
        raise OSError("sandbox vanished")

    loop, backend = _loop(proxy, RolloutOutcome("completed"))
    backend.script = broken
    assert _run(loop) == []
    assert loop.discards == {"harness_crash_without_answer": 1} and proxy.released


def test_rollout_with_a_call_missing_engine_ids_is_masked_and_its_fidelity_logged(caplog):
    _, records, _ = claude_code_rollout()
    records[5] = records[5].model_copy(update={"prompt_token_ids": None})  # a router dropped them once
    loop, _ = _loop(RecordedProxy(records), RolloutOutcome("completed", exit_code=0, reward=1.0))
    with caplog.at_level("INFO", logger="forge_eval.training.verl.agent_loop"):
        assert _run(loop) == []  # nothing of it is trained on, nothing re-tokenized
    assert loop.discards == {"unverified_tokens": 1}
    assert "1 of 8 calls without engine token ids" in caplog.text
