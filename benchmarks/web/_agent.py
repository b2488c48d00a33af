"""A web benchmark sample's agent: the molmoweb loop, or any tool-calling harness with browser tools."""

from __future__ import annotations

from inspect_ai.model import get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from forge_eval.benchmarks.web._actions import ACTIONS
from forge_eval.benchmarks.web._binding import current_env
from forge_eval.benchmarks.web._tools import browser_tools
from forge_eval.benchmarks.web._upstream import MOLMOWEB_TREE, locate_tree
from forge_eval.harnesses import HARNESSES, MolmoWebHarness, is_text_only
from forge_eval.harnesses.molmoweb import uses_text


@solver
def web_agent(
    harness: str = "molmoweb",
    system_prompt: str = "",
    observation: str = "auto",
    upstream_dir: str | None = None,
) -> Solver:
    """Run `harness` on the sample's browser episode.

    The molmoweb harness runs MolmoWeb's own agent from its pinned tree (in `upstream_dir`, else the
    cache, else downloaded) for models that see screenshots, and our text variant otherwise. Tool-calling
    harnesses get one tool per browser action; for text-only models (the embedded ones, or
    `observation="text"`) the tool results carry the element list instead of the screenshot.
    """
    chosen = HARNESSES.get(harness)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if isinstance(chosen, MolmoWebHarness):  # it drives the episode itself, with the actions it is given
            episode, actions = current_env(), [spec for _, spec in ACTIONS.items()]
            options = {"observation": observation, "episode": episode, "actions": actions}
            if not uses_text(observation, str(get_model())):
                options["molmoweb_tree"] = locate_tree(MOLMOWEB_TREE, upstream_dir)
            inner = chosen.solver(tools=[], system_prompt=system_prompt, **options)
        else:
            text = observation == "text" or (observation == "auto" and is_text_only(str(get_model())))
            current_env().elements = text
            state.metadata["observation"] = "text" if text else "screenshot"
            inner = chosen.solver(tools=browser_tools(screenshot=not text), system_prompt=system_prompt)
        return await inner(state, generate)

    return solve
