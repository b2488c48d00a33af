"""Upstream's MCP-Atlas code, imported from the pinned tree in isolation from forge-eval's own imports.

MCP-Atlas's agent loop (`services/mcp_eval/mcp_completion`), its completion script (retries, timeout,
answer extraction) and its claim judge (`mcp_evals_scores.py`) run here as upstream wrote them, read at
run time from the pinned tree. They are imported under private module names, so they never become
`mcp_completion` or `mcp_evals_scores` for anyone else, and their third-party imports resolve as follows:

- packages forge-eval already depends on (pandas, numpy, tenacity, tqdm, httpx, pydantic, fastapi,
  aiohttp) are the installed ones;
- `litellm` is a shim with one function, `acompletion`, which sends the request upstream built to where
  forge-eval serves the model (the sample's recording proxy for the agent, the Inspect role `judge` for
  the claim judge). litellm itself is not installed: its only job upstream is that call;
- import-time side effects that would change this process are neutralised: `nest_asyncio.apply()`
  (patches every event loop), `load_dotenv()` (would read a `.env` into our environment),
  `logging.basicConfig` / `FileHandler` (would reconfigure the root logger and write
  `completion_results/mcp_eval.log` in the working directory), `warnings.filterwarnings("ignore")`;
- packages only upstream's file output uses (`aiofiles`, `aiocsv`, `matplotlib`, `datasets`) are empty
  stand-ins: forge-eval keeps results in Inspect's log, not in upstream's CSVs and plots; so are `tqdm`
  (progress bars of upstream's batch loop) and `requests` (its server census) where they are not
  installed: the functions forge-eval calls do not use them.

This is why the shims are written by hand: no library imports a module against a substitute
`sys.modules` and gives the substitutes back afterwards.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from forge_eval._errors import ForgeError
from forge_eval.harnesses.upstream import exec_file, exec_package, modules_in_place

#: Where upstream's files sit in its tree.
MCP_EVAL = "services/mcp_eval"
SCORES_FILE = f"{MCP_EVAL}/mcp_evals_scores.py"
SCRIPT_FILE = f"{MCP_EVAL}/mcp_completion_script.py"
LOOP_PACKAGE = f"{MCP_EVAL}/mcp_completion"

_LOCK = threading.Lock()


def _module(name: str, **attributes: Any) -> ModuleType:
    module = ModuleType(name)
    module.__dict__.update(attributes)
    return module


def litellm_shim(acompletion: Callable[..., Any]) -> dict[str, ModuleType]:
    """A `litellm` whose `acompletion` is `acompletion`; `litellm.types.utils.Message` (a pydantic field
    type in upstream's schema) accepts any message object."""
    utils = _module("litellm.types.utils", Message=Any)
    types = _module("litellm.types", utils=utils)
    litellm = _module("litellm", acompletion=acompletion, types=types, api_key=None, api_base=None)
    litellm.__path__ = []  # a package, so that `litellm.types.utils` imports
    types.__path__ = []
    return {"litellm": litellm, "litellm.types": types, "litellm.types.utils": utils}


def inert_shims() -> dict[str, ModuleType]:
    """Stand-ins for the modules whose import-time effects or file output forge-eval does not take."""
    pyplot = _module("matplotlib.pyplot")
    matplotlib = _module("matplotlib", pyplot=pyplot)
    matplotlib.__path__ = []
    absent = {
        "tqdm": _module("tqdm", tqdm=None, asyncio=_module("tqdm.asyncio", tqdm=None)),
        "requests": _module("requests"),
    }
    for name, module in list(absent.items()):
        if importlib.util.find_spec(name) is not None:
            del absent[name]  # installed: upstream gets the real one
        elif name == "tqdm":
            module.__path__ = []
            absent["tqdm.asyncio"] = module.asyncio
    return {
        **absent,
        "nest_asyncio": _module("nest_asyncio", apply=lambda *a, **k: None),
        "dotenv": _module("dotenv", load_dotenv=lambda *a, **k: False, find_dotenv=lambda *a, **k: ""),
        "matplotlib": matplotlib,
        "matplotlib.pyplot": pyplot,
        "aiofiles": _module("aiofiles"),
        "aiocsv": _module("aiocsv"),
        "datasets": _module("datasets", load_dataset=None),
    }


class _NullFileHandler(logging.NullHandler):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()


@contextmanager
def _substitutes(shims: Mapping[str, ModuleType]) -> Iterator[None]:
    """`shims` in `sys.modules` and the process-wide setup calls inert, only while upstream's modules run
    their top level; everything is given back afterwards."""
    saved = (logging.basicConfig, logging.FileHandler, warnings.filterwarnings)
    bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = True  # no __pycache__ in upstream's tree: its files stay as pinned
    logging.basicConfig = lambda *a, **k: None  # type: ignore[assignment]
    logging.FileHandler = _NullFileHandler  # type: ignore[assignment,misc]
    warnings.filterwarnings = lambda *a, **k: None  # type: ignore[assignment]
    try:
        with modules_in_place(shims):
            yield
    finally:
        logging.basicConfig, logging.FileHandler, warnings.filterwarnings = saved  # type: ignore[misc]
        sys.dont_write_bytecode = bytecode


def private_name(tree: Path, what: str) -> str:
    """A module name of our own for upstream's `what` from `tree` (one per tree)."""
    digest = hashlib.sha256(str(tree.resolve()).encode()).hexdigest()[:12]
    return f"forge_upstream_mcpatlas_{digest}_{what}"


def import_file(tree: Path, path: str, name: str, shims: Mapping[str, ModuleType]) -> ModuleType:
    """Upstream's module `path` of `tree`, executed under `name` with `shims` (not kept in `sys.modules`).

    Raises:
        ForgeError: the tree has no such file, or it failed to import.
    """
    file = tree / path
    if not file.is_file():
        raise ForgeError(
            f"the MCP-Atlas tree {tree} has no {path}",
            hint="point --data-dir at a checkout of scaleapi/mcp-atlas at b290e67 (or its services/mcp_eval)",
        )
    with _LOCK, _substitutes({**inert_shims(), **shims}):
        try:
            return exec_file(name, file)
        except Exception as e:
            raise ForgeError(f"upstream's {path} failed to import: {type(e).__name__}: {e}") from e


def import_package(
    tree: Path, path: str, name: str, shims: Mapping[str, ModuleType], submodules: tuple[str, ...]
) -> dict[str, ModuleType]:
    """Upstream's package `path` of `tree` under `name` (its relative imports resolve inside it) and the
    `submodules` asked for, by their short names. The package stays in `sys.modules` under `name`."""
    folder = tree / path
    if not (folder / "__init__.py").is_file():
        raise ForgeError(
            f"the MCP-Atlas tree {tree} has no package {path}",
            hint="point --data-dir at a checkout of scaleapi/mcp-atlas at b290e67",
        )
    with _LOCK, _substitutes({**inert_shims(), **shims}):
        if name not in sys.modules:
            exec_package(name, folder)
        try:
            return {sub: importlib.import_module(f"{name}.{sub}") for sub in submodules}
        except Exception as e:
            raise ForgeError(f"upstream's {path} failed to import: {type(e).__name__}: {e}") from e
