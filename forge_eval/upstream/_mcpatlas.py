"""Upstream's MCP-Atlas code, imported from the pinned tree in isolation from forge-eval's own imports.

MCP-Atlas's agent loop (`services/mcp_eval/mcp_completion`, run by the `atlas-loop` harness), its
completion script (retries, timeout, answer extraction) and its claim judge (`mcp_evals_scores.py`, run by
the benchmark's scorer) run as upstream wrote them, read at run time from the pinned tree. Both the harness
and the benchmark load them, so their stand-ins live here. Third-party imports resolve as follows:

- packages forge-eval already depends on (pandas, numpy, tenacity, tqdm, httpx, pydantic, fastapi,
  aiohttp) are the installed ones;
- `litellm` is a stand-in with one function, `acompletion`, which sends the request upstream built to where
  forge-eval serves the model (the sample's recording proxy for the agent, the Inspect role `judge` for
  the claim judge). litellm itself is not installed: its only job upstream is that call;
- import-time side effects that would change this process are neutralised: `nest_asyncio.apply()`
  (patches every event loop), `load_dotenv()` (would read a `.env` into our environment), and the
  logging / warnings setup every upstream load has made inert (`stand_ins`);
- packages only upstream's file output uses (`aiofiles`, `aiocsv`, `matplotlib`, `datasets`) are empty
  stand-ins: forge-eval keeps results in Inspect's log, not in upstream's CSVs and plots; so are `tqdm`
  (progress bars of upstream's batch loop) and `requests` (its server census) where they are not
  installed: the functions forge-eval calls do not use them.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from forge_eval.upstream._loading import import_file, import_package, private_name
from forge_eval.upstream._stand_ins import stand_in

#: Where upstream's files sit in its tree.
MCP_EVAL = "services/mcp_eval"
SCORES_FILE = f"{MCP_EVAL}/mcp_evals_scores.py"
SCRIPT_FILE = f"{MCP_EVAL}/mcp_completion_script.py"
LOOP_PACKAGE = f"{MCP_EVAL}/mcp_completion"
_TREE_HINT = "point --data-dir at a checkout of scaleapi/mcp-atlas at b290e67"


def litellm_shim(acompletion: Callable[..., Any]) -> dict[str, ModuleType]:
    """A `litellm` whose `acompletion` is `acompletion`; `litellm.types.utils.Message` (a pydantic field
    type in upstream's schema) accepts any message object."""
    utils = stand_in("litellm.types.utils", Message=Any)
    types = stand_in("litellm.types", package=True, utils=utils)
    litellm = stand_in(
        "litellm", package=True, acompletion=acompletion, types=types, api_key=None, api_base=None
    )
    return {"litellm": litellm, "litellm.types": types, "litellm.types.utils": utils}


def inert_shims() -> dict[str, ModuleType]:
    """Stand-ins for the modules whose import-time effects or file output forge-eval does not take."""
    pyplot = stand_in("matplotlib.pyplot")
    absent = {
        "tqdm": stand_in("tqdm", tqdm=None, asyncio=stand_in("tqdm.asyncio", tqdm=None)),
        "requests": stand_in("requests"),
    }
    for name, module in list(absent.items()):
        if importlib.util.find_spec(name) is not None:
            del absent[name]  # installed: upstream gets the real one
        elif name == "tqdm":
            module.__path__ = []
            absent["tqdm.asyncio"] = module.asyncio
    return {
        **absent,
        "nest_asyncio": stand_in("nest_asyncio", apply=lambda *a, **k: None),
        "dotenv": stand_in("dotenv", load_dotenv=lambda *a, **k: False, find_dotenv=lambda *a, **k: ""),
        "matplotlib": stand_in("matplotlib", package=True, pyplot=pyplot),
        "matplotlib.pyplot": pyplot,
        "aiofiles": stand_in("aiofiles"),
        "aiocsv": stand_in("aiocsv"),
        "datasets": stand_in("datasets", load_dataset=None),
    }


def atlas_private_name(tree: Path, what: str) -> str:
    """A module name of our own for upstream's `what` from `tree` (one per tree)."""
    return private_name("mcpatlas", tree, what)


def atlas_import_file(tree: Path, path: str, name: str, shims: Mapping[str, ModuleType]) -> ModuleType:
    """Upstream's module `path` of `tree`, executed under `name` with `shims` (not kept in `sys.modules`).

    Raises:
        ForgeError: the tree has no such file, or it failed to import.
    """
    hint = f"{_TREE_HINT} (or its {MCP_EVAL})"
    return import_file(tree, path, name, {**inert_shims(), **shims}, benchmark="MCP-Atlas", hint=hint)


def atlas_import_package(
    tree: Path, path: str, name: str, shims: Mapping[str, ModuleType], submodules: tuple[str, ...]
) -> dict[str, ModuleType]:
    """Upstream's package `path` of `tree` under `name` and the `submodules` asked for, by their short
    names. The package stays in `sys.modules` under `name`."""
    modules = {**inert_shims(), **shims}
    return import_package(tree, path, name, modules, submodules, benchmark="MCP-Atlas", hint=_TREE_HINT)
