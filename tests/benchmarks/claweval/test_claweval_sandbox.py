"""Upstream's sandbox tools in our bubblewrap sandbox: a sandbox task solved end to end through them, and
what the code the model runs there can reach.

T100 (reverse decoder): the scripted agent reads the task's decoder and target through Bash, builds the
encoding the decoder inverts (header, XOR mask, block interleave, prefix codes with run lengths), writes
`/workspace/encoded.dat` through Bash and checks it with the decoder; upstream's grader then runs its
own verifier in the sandbox (`sandbox_grader_files`, `env_snapshot_commands`) and scores it.
"""

from __future__ import annotations

import ast
import base64
import json
import re
import socket
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput

from forge_eval.benchmarks.claweval import TRACE_KEY
from tests.benchmarks.claweval.test_claweval_upstream import _out, _score, run_trial

pytestmark = pytest.mark.slow

T100 = "T100_reverse_decoder"


def _bits(value: int, width: int) -> list[int]:
    return [(value >> (width - 1 - j)) & 1 for j in range(width)]


def encode(target: bytes, table: bytes, seed: int = 0x1234) -> bytes:
    """The input the decoder turns into `target` (its stages inverted in reverse order)."""
    codes = {table[i + 2]: _bits(table[i + 1], table[i]) for i in range(0, len(table), 3)}

    def symbol(byte: int) -> list[int]:
        return codes.get(byte) or [1] * 6 + _bits(byte, 8)

    bits: list[int] = []
    i = 0
    while i < len(target):
        run = 1
        while i + run < len(target) and target[i + run] == target[i] and run < 17:
            run += 1
        if run >= 2:
            bits += [1, *_bits(run - 2, 4), *symbol(target[i])]
        else:
            bits += [0, *symbol(target[i])]
        i += run
    bits += [0] * (-len(bits) % 8)
    stream = bytes(int("".join(map(str, bits[k : k + 8])), 2) for k in range(0, len(bits), 8))
    blocks = b"".join(stream[o : o + 16][0::2] + stream[o : o + 16][1::2] for o in range(0, len(stream), 16))
    masked = bytes(b ^ ((seed * (k + 1) + 165) & 255) for k, b in enumerate(blocks))
    n = len(target)
    return bytes([n >> 8, seed >> 8, n & 255, seed & 255]) + masked


class Decoder:
    """The scripted agent of T100 (module doc)."""

    def __init__(self, host_port: int, host_paths: tuple[Path, Path]) -> None:
        self.host_port, self.host_paths = host_port, host_paths
        self.results: list[dict[str, Any]] = []

    def __call__(
        self, messages: list[ChatMessage], tools: Any, tool_choice: Any, config: GenerateConfig
    ) -> ModelOutput:
        self.results = [json.loads(m.text) for m in messages if m.role == "tool"]
        turn = len(self.results)
        if turn == 0:
            return self._bash("cat /workspace/fixtures/decoder.py")
        if turn == 1:
            return self._bash("base64 -w0 /workspace/fixtures/target.txt")
        if turn == 2:
            table = ast.literal_eval(re.search(r"_C=(b'[^']*')", self.results[0]["stdout"]).group(1))
            target = base64.b64decode(self.results[1]["stdout"].strip())
            data = base64.b64encode(encode(target, table)).decode()
            return self._bash(f"echo {data} | base64 -d > /workspace/encoded.dat")
        if turn == 3:
            decoded = "python3 /workspace/fixtures/decoder.py < /workspace/encoded.dat"
            check = f"{decoded} | cmp - /workspace/fixtures/target.txt && echo SAME"
            return self._bash(f"{check}; wc -c < /workspace/encoded.dat")
        if turn == 4:  # what else the sandbox's code sees: its user, a host port, host files, the tree
            probe = (
                "import os, socket; s = socket.socket(); s.settimeout(2); "
                f"print(os.getuid(), s.connect_ex(('127.0.0.1', {self.host_port})), "
                f"os.path.exists('{self.host_paths[0]}'), os.path.exists('{self.host_paths[1]}'), "
                "sorted(os.listdir('/workspace/fixtures')))"
            )
            return self._bash(f'python3 -c "{probe}"')
        return _out(ModelOutput.from_content("mockllm", "encoded.dat is written and decodes to target.txt."))

    @staticmethod
    def _bash(command: str) -> ModelOutput:
        return _out(ModelOutput.for_tool_call("mockllm", "Bash", {"command": command}))


def test_a_sandbox_task_is_solved_through_upstreams_sandbox_tools(
    claweval_tree: Path, claweval_python: Path, tmp_path: Path
) -> None:
    with socket.socket() as host:  # a host port that answers, as the model server and proxies do
        host.bind(("127.0.0.1", 0))
        host.listen()
        # host paths that exist: this checkout and the test's own folder
        agent = Decoder(host.getsockname()[1], (Path(__file__).resolve().parents[3], tmp_path))
        log = run_trial(claweval_tree, T100, agent, tmp_path)
    same, size = agent.results[3]["stdout"].split()
    assert same == "SAME"
    assert int(size) <= 0.6 * (claweval_tree / "tasks" / T100 / "fixtures" / "target.txt").stat().st_size
    uid, connect, work, cache, listing = agent.results[4]["stdout"].split(" ", 4)
    assert int(uid) >= 1_000_000 and int(connect) != 0  # unprivileged; no host port reachable
    assert (work, cache) == ("False", "False")  # no host files
    assert listing.strip() == "['decoder.py', 'target.txt']"  # the grader's verifier comes after the run
    score = _score(log)
    assert score.metadata["passed"] is True and score.value >= 0.75, score.explanation
    (sample,) = log.samples or []
    events = [json.loads(line) for line in sample.store[TRACE_KEY].splitlines()]
    assert [e["tool_name"] for e in events if e["type"] == "tool_dispatch"] == ["Bash"] * 5
