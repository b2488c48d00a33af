"""End to end with the real embedded models (llama.cpp on CPU); short generations only."""

import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from forge_eval.models import EMBEDDED_MODELS, EmbeddedModelServer

pytestmark = pytest.mark.e2e

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
WEATHER_QUESTION = [{"role": "user", "content": "What is the weather in Paris right now?"}]


def _require(model: str) -> None:
    if not EMBEDDED_MODELS.get(model).installed():
        pytest.skip(f"{model} weights not installed")


@pytest.fixture(scope="module")
def qwen(tmp_path_factory: pytest.TempPathFactory) -> EmbeddedModelServer:
    _require("qwen-0.5b")
    log = tmp_path_factory.mktemp("qwen") / "requests.jsonl"
    with EmbeddedModelServer(model="qwen-0.5b", request_log=log) as server:
        yield server


def _chat(server: EmbeddedModelServer, **body) -> dict:
    response = httpx.post(
        f"{server.base_url}/chat/completions", json={"model": server.model_name, **body}, timeout=120
    )
    response.raise_for_status()
    return response.json()


def test_obvious_request_gives_structured_tool_call(qwen: EmbeddedModelServer) -> None:
    result = _chat(qwen, messages=WEATHER_QUESTION, tools=[WEATHER_TOOL], max_tokens=40, temperature=0)
    (call,) = result["choices"][0]["message"]["tool_calls"]
    assert call["function"]["name"] == "get_weather"
    assert "paris" in json.loads(call["function"]["arguments"])["city"].lower()
    assert result["forge"]["tool_parse"] == "parsed"
    assert result["forge"]["format"] in ("tagged", "fenced", "bare")
    assert httpx.get(qwen.base_url.removesuffix("/v1") + "/forge/stats").json()["parsed"] >= 1


def test_same_seed_same_text_and_seeds_reach_the_wire(tmp_path: Path) -> None:
    """In deterministic mode the text depends on the seed only, not on what ran before."""
    _require("qwen-0.5b")
    log = tmp_path / "requests.jsonl"
    messages = [{"role": "user", "content": "Invent a name for a cat."}]
    with EmbeddedModelServer(model="qwen-0.5b", request_log=log, deterministic=True) as server:

        def sample(seed: int) -> str:
            body = {"messages": messages, "max_tokens": 8, "temperature": 0.8, "seed": seed}
            return _chat(server, **body)["choices"][0]["message"]["content"]

        first = sample(1234)
        others = {sample(seed) for seed in (1, 2)}
        again = sample(1234)  # the cache now holds other samples of the same prompt
    assert first == again
    assert others - {first}, "different seeds at temperature 0.8 should not all give the same text"
    seeds = [json.loads(line)["seed"] for line in log.read_text().splitlines()]
    assert seeds == [1234, 1, 2, 1234]


def test_stop_and_max_tokens_are_honoured(qwen: EmbeddedModelServer) -> None:
    messages = [
        {"role": "user", "content": "Count from 1 to 20, separated by spaces. Output only the numbers."}
    ]
    stopped = _chat(qwen, messages=messages, max_tokens=40, temperature=0, stop=["7"])["choices"][0]
    assert stopped["finish_reason"] == "stop"
    assert "6" in stopped["message"]["content"] and "7" not in stopped["message"]["content"]
    cut = _chat(qwen, messages=messages, max_tokens=3, temperature=0)
    assert cut["choices"][0]["finish_reason"] == "length"
    assert cut["usage"]["completion_tokens"] == 3


def test_two_concurrent_requests(qwen: EmbeddedModelServer) -> None:
    messages = [{"role": "user", "content": "Say hello."}]
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda s: _chat(qwen, messages=messages, max_tokens=4, seed=s), (7, 8)))
    assert all(r["usage"]["completion_tokens"] >= 1 for r in results)


def test_inspect_get_model_receives_a_tool_call(qwen: EmbeddedModelServer) -> None:
    from inspect_ai.model import GenerateConfig, get_model
    from inspect_ai.tool import ToolInfo, ToolParam, ToolParams

    ref = qwen.inspect_model()
    assert ref.model == "openai-api/forge/qwen-0.5b"
    config = GenerateConfig(max_tokens=40, temperature=0, seed=5)
    model = get_model(ref.model, base_url=ref.base_url, **ref.model_args, config=config)
    tool = ToolInfo(
        name="get_weather",
        description="Get the current weather for a city",
        parameters=ToolParams(properties={"city": ToolParam(type="string")}, required=["city"]),
    )

    async def generate():
        return await model.generate("What is the weather in Paris right now?", tools=[tool])

    import asyncio

    output = asyncio.run(generate())
    (call,) = output.message.tool_calls
    assert call.function == "get_weather"
    assert "paris" in str(call.arguments["city"]).lower()


def test_cli_serves_in_foreground_and_prints_how_to_connect() -> None:
    _require("smollm2")
    proc = subprocess.Popen(
        [sys.executable, "-m", "forge_eval._cli.main", "serve-model", "--model", "smollm2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        first = proc.stdout.readline()
        rest = [proc.stdout.readline() for _ in range(3)]
        assert first.startswith("serving smollm2 at http://127.0.0.1:")
        base_url = first.split(" at ")[1].split()[0]
        assert any("openai-api/forge/smollm2" in line for line in rest)
        assert httpx.get(f"{base_url}/models", timeout=30).json()["data"][0]["id"] == "smollm2"
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) is not None


def test_child_dies_with_its_parent(tmp_path: Path) -> None:
    """Even a parent killed by SIGKILL (no atexit) does not leave the model server running."""
    _require("smollm2")
    script = (
        "import os, sys\n"
        "from forge_eval.models import EmbeddedModelServer\n"
        "from pathlib import Path\n"
        f"s = EmbeddedModelServer(model='smollm2', log_file=Path({str(tmp_path / 'server.log')!r})).start()\n"
        "print(s.pid, flush=True)\n"
        "sys.stdin.read()\n"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    child_pid = int(parent.stdout.readline())
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            os.kill(child_pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    os.kill(child_pid, signal.SIGKILL)
    pytest.fail("the model server outlived its parent")
