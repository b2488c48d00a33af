"""`PolicyUpstream`: the proxy's upstream is the small policy itself, served in-process.

It does what a model server does for the proxy (vLLM with `return_token_ids`): render the chat template,
decode under the tool-call grammar, parse the tool call, and return token ids, logprobs and the policy
version. In-process rather than behind a second HTTP hop because the policy's weights live in the trainer
and one more hop per call would double the CPU spent on plumbing; the harness still reaches it only
through the real proxy over HTTP, and every call is recorded.

Like a batching server (vLLM's continuous batching) it decodes concurrent calls together: the trainer
opens a session per rollout it starts, and once every open rollout is waiting on a call, those calls are
decoded in one batch (in a fixed order, by rollout and call number). Which calls share a batch is then a
function of the rollouts alone, never of timing, so a run stays bitwise repeatable.
"""

import asyncio
import hashlib
import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from forge_eval.proxy import (
    CanonicalRequest,
    CanonicalResponse,
    ToolCall,
    UpstreamError,
    UpstreamResult,
)
from forge_eval.training.ablation import _tokens

if TYPE_CHECKING:  # the policy module imports torch, which the package's users (the CLI) need not load
    from forge_eval.training.ablation._model import Policy, Turn


def call_seed(seed: int, route_key: str, call_seq: int) -> int:
    """The sampling seed of one call: from the rollout's pinned seed, its key and the call's number."""
    digest = hashlib.sha256(f"{seed}|{route_key}|{call_seq}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & (2**63 - 1)


@dataclass(frozen=True)
class _Waiting:
    key: tuple[str, int]  # (route key, call number): the batch order
    turn: "Turn"
    answer: "asyncio.Future[tuple[list[int], list[float]]]"


class PolicyUpstream:
    """Serves canonical chat requests from a `Policy` as model `name` (`policy_version` is set by the
    trainer), decoding the calls of open sessions in batches of at most `max_batch` (0: no limit)."""

    def __init__(self, model: "Policy", name: str, *, max_batch: int = 0) -> None:
        self.model, self.name, self.max_batch = model, name, max_batch
        self.policy_version = 0
        self._sessions = 0
        self._waiting: list[_Waiting] = []

    def open_sessions(self, n: int) -> None:
        """`n` rollouts start: their calls are batched with each other's."""
        self._sessions += n

    def close_session(self) -> None:
        """A rollout ended (finished or failed): the calls of the others no longer wait for it."""
        self._sessions -= 1
        self._decode_if_all_waiting()

    def _decode_if_all_waiting(self) -> None:
        # deferred: _model imports torch, an optional dependency (scripts/setup.d/40-verl.sh)
        from forge_eval.training.ablation._model import sample

        if not self._waiting or len(self._waiting) < self._sessions:
            return
        batch, self._waiting = sorted(self._waiting, key=lambda w: w.key), []
        size = self.max_batch or len(batch)
        for start in range(0, len(batch), size):
            chunk = batch[start : start + size]
            try:
                answers = sample(self.model, [w.turn for w in chunk])
            except Exception as e:  # every caller hears of it, none hangs
                for w in chunk:
                    if not w.answer.done():
                        w.answer.set_exception(e)
                continue
            for w, answer in zip(chunk, answers, strict=True):
                if not w.answer.done():  # a caller that went away (client disconnect) cancelled its own
                    w.answer.set_result(answer)

    async def complete(
        self, request: CanonicalRequest, sampling: dict[str, Any], *, route_key: str, call_seq: int
    ) -> UpstreamResult:
        served = request.body(self.name, sampling)
        if request.is_completion:
            raise UpstreamError(
                "http_4xx", "the small policy serves chat requests only", 400, served_request=served
            )
        grammar = self.model.grammar
        prompt = grammar.render_prompt(request.messages, request.tools, request.tool_choice)
        if len(prompt) + _tokens.MAX_TURN_TOKENS > self.model.max_len:
            raise UpstreamError(
                "context_length",
                f"prompt of {len(prompt)} tokens exceeds the maximum context length of {self.model.max_len}",
                400,
                served_request=served,
            )
        # deferred: _model imports torch, an optional dependency (scripts/setup.d/40-verl.sh)
        from forge_eval.training.ablation._model import Turn

        t_start = time.time()
        turn = Turn(
            prompt,
            float(sampling.get("temperature", 1.0)),
            call_seed(int(sampling.get("seed", 0)), route_key, call_seq),
        )
        answer: asyncio.Future[tuple[list[int], list[float]]] = asyncio.get_running_loop().create_future()
        self._waiting.append(_Waiting((route_key, call_seq), turn, answer))
        self._decode_if_all_waiting()
        ids, logprobs = await answer
        text, calls = grammar.parse(ids)
        tool_calls = [ToolCall(f"call_{call_seq}_{i}", n, json.dumps(a)) for i, (n, a) in enumerate(calls)]
        response = CanonicalResponse(
            text=text,
            tool_calls=tool_calls,
            finish_reason="tool_calls" if tool_calls else "stop",
            prompt_tokens=len(prompt),
            completion_tokens=len(ids),
            model=self.name,
            prompt_token_ids=prompt,
            completion_token_ids=ids,
            completion_logprobs=logprobs,
            policy_version=self.policy_version,
        )
        raw = {
            "model": self.name,
            "choices": [{"message": response.assistant_message(), "finish_reason": response.finish_reason}],
        }
        return UpstreamResult(response, served, raw, "in-process", 200, [], t_start, time.time())

    async def count_tokens(self, request: CanonicalRequest) -> int:
        return len(self.model.grammar.render_prompt(request.messages, request.tools, request.tool_choice))

    async def aclose(self) -> None:
        """Nothing to release: the policy belongs to the trainer."""
