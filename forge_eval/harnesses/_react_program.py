"""The react harness as a program, for training rollouts: `python -m forge_eval.harnesses._react_program
SPEC.json` runs the same solver as `forge-eval run` (`ReactHarness.solver`; Inspect's react() needs an
active sample) in a one-sample Inspect eval, in the rollout's sandbox, logging under its TMPDIR. Its model
is the rollout's proxy (OpenAI chat API, `OPENAI_BASE_URL`); its tools are the task's, each a call to the
tool bridge (`FORGE_TOOLS_URL`, the list from `/schemas`). It prints one JSON line, `{"answer": ...}`,
which `final_answer` reads.
"""

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import httpx
from inspect_ai import Task, eval_async
from inspect_ai.dataset import Sample
from inspect_ai.model import get_model
from inspect_ai.tool import Tool, ToolDef, ToolError, ToolParams

from forge_eval.harnesses._external import POLICY_MODEL
from forge_eval.harnesses._react import ReactHarness

_TOOL_TIMEOUT_S = 120.0


def remote_tool(url: str, schema: dict[str, Any]) -> Tool:
    """A tool that runs `schema["name"]` on the tool bridge at `url`; its errors reach the model."""
    name = schema["name"]

    async def execute(**arguments: Any) -> str:
        async with httpx.AsyncClient(timeout=_TOOL_TIMEOUT_S) as client:
            response = await client.post(f"{url}/tools/{name}", json=arguments)
        body = response.json()
        if response.status_code >= 400:
            raise ToolError(str(body.get("error", response.text)))
        return str(body["result"])

    parameters = ToolParams.model_validate(schema["parameters"])
    return ToolDef(execute, name=name, description=schema["description"], parameters=parameters).as_tool()


async def main(spec_path: Path) -> int:
    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    url = os.environ["FORGE_TOOLS_URL"]
    async with httpx.AsyncClient(timeout=_TOOL_TIMEOUT_S) as client:
        schemas = (await client.get(f"{url}/schemas")).json()
    model = get_model(
        f"openai-api/forge/{POLICY_MODEL}",
        base_url=os.environ["OPENAI_BASE_URL"],
        api_key=os.environ["OPENAI_API_KEY"],
    )
    tools = [remote_tool(url, s) for s in schemas]
    task = Task(
        dataset=[Sample(input=spec["prompt"])],
        solver=ReactHarness().solver(tools=tools, system_prompt=spec["system_prompt"]),
        name="forge-rollout",
    )
    log_dir = Path(os.environ.get("TMPDIR", "/tmp")) / "inspect-logs"
    [log] = await eval_async(task, model=model, log_dir=str(log_dir), score=False)
    if log.status != "success" or not log.samples:
        print(f"react rollout failed: {log.error.message if log.error else log.status}", file=sys.stderr)
        return 1
    print(json.dumps({"answer": log.samples[0].output.completion}))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(Path(sys.argv[1]))))
