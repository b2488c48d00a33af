"""forge-eval's ReAct harness (Inspect's react(), non-streaming OpenAI client) through the proxy."""

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import get_model
from inspect_ai.solver import Generate, TaskState, chain, solver
from inspect_ai.tool import bash
from inspect_ai.util import sandbox

from forge_eval.harnesses import HARNESSES
from forge_eval.proxy import read_calls
from tests.proxy._harnesses import TASK


@solver
def read_result():
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.metadata["file"] = await sandbox().read_file("hello.txt")
        return state

    return solve


def test_react_harness_writes_the_file_through_the_proxy(proxy, scripted, tmp_path):
    created = proxy.rollout("react", harness="react", sampling={"temperature": 0.4})
    model = get_model(
        "openai-api/forge/forge-policy", base_url=proxy.url + created["base_path"] + "/v1", api_key="unused"
    )
    agent = HARNESSES.get("react").solver(tools=[bash(timeout=30)], system_prompt="You are a careful agent.")
    task = Task(
        dataset=[Sample(input=TASK)], solver=chain(agent, read_result()), sandbox="local", message_limit=12
    )
    log = eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none")[0]
    assert log.status == "success", log.error
    assert log.samples[0].metadata["file"] == "hi"

    calls = read_calls(proxy.records, "react")
    assert [c.seq for c in calls] == [0, 1]
    assert all(c.api == "chat" and not c.stream for c in calls)  # the non-streamed variant
    names = [c.returned_response["choices"][0]["message"]["tool_calls"][0]["function"]["name"] for c in calls]
    assert names == ["bash", "submit"]
    assert calls[1].served_request["messages"][-1]["role"] == "tool"
    assert all(c.served_request["temperature"] == 0.4 for c in calls)
