"""OSWorld's own checkers (getters + metrics), controllers and `DesktopEnv`, from the pinned OSWorld tree.

The task data, the evaluators and the in-desktop server come from one tree at one commit: the folder that
holds `evaluation_examples/` also holds `desktop_env/`, and that package is imported from there at run
time (under its own name, so its absolute imports resolve inside the tree). PyPI's `desktop-env` 1.0.2 is
older than the Verified task data (ten modules differ, some metrics and options are missing), so it is
never used, even where it is installed.

The tree's requirements list ~70 packages (torch, cloud SDKs, ...) that its checkers do not import; the
ones they do import are the `osworld` extra (`forge_eval.benchmarks.osworld.install`). A few heavy or
online-only imports (OCR, audio fingerprinting, Google Drive, a PDF library) are optional: when absent
they are replaced by placeholders that fail when *used*, and the tasks whose metrics use them are listed
as skipped with the package to install.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import os
import sys
import tempfile
import types
import warnings
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from forge_eval._errors import ForgeError
from forge_eval.upstream import absent_module, import_own_package, modules_in_place

#: The package the tree holds, and a file that proves a folder is an OSWorld tree with its code.
PACKAGE = "desktop_env"
TREE_MARKER = "desktop_env/desktop_env.py"
#: Modules the tree's checkers and baseline agent import at module level that may be left out (name ->
#: pip package): OCR, audio fingerprinting, Google Drive and a PDF library for a few metrics; the LLM
#: SDKs of the agent's own model calls, which forge-eval replaces with the run's Inspect model.
OPTIONAL_MODULES = {
    "easyocr": "easyocr",
    "pydrive": "pydrive",
    "pydrive.auth": "pydrive",
    "pydrive.drive": "pydrive",
    "borb": "borb",
    "borb.pdf": "borb",
    "librosa": "librosa",
    "acoustid": "pyacoustid",
    "dashscope": "dashscope",
    "google": "google-api-core",
    "google.generativeai": "google-generativeai",
    "google.api_core": "google-api-core",
    "google.api_core.exceptions": "google-api-core",
    "groq": "groq",
}
INSTALL_HINT = "python -m forge_eval.benchmarks.osworld.install  (or: pip install 'forge-eval[osworld]')"


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:  # its parent package is missing
        return False


@cache
def absent_modules() -> frozenset[str]:
    """The optional modules that are not installed here."""
    return frozenset(m for m in OPTIONAL_MODULES if not _installed(m))


def _placeholders() -> contextlib.AbstractContextManager[None]:
    """Placeholders in `sys.modules` only while OSWorld's modules import (they keep their references).

    Left in place, they would make the rest of the process see e.g. `librosa` as importable with no
    `__spec__`, and libraries that probe optional packages (transformers, under veRL) fail on it.
    """
    absent = {
        name: absent_module(name, OPTIONAL_MODULES[name], f"pip install {OPTIONAL_MODULES[name]}")
        for name in sorted(absent_modules())
        if name not in sys.modules
    }
    return modules_in_place(absent)


def _no_proxy_pool() -> None:
    """Give OSWorld's proxy pool an empty list: its settings (a paid proxy service) are not public data.

    Without one it prints a file-not-found message at import; tasks that need the proxy are skipped.
    """
    if "PROXY_CONFIG_FILE" not in os.environ:
        empty = Path(tempfile.gettempdir()) / "forge-osworld-no-proxies.json"
        if not empty.exists():
            empty.write_text("[]")
        os.environ["PROXY_CONFIG_FILE"] = str(empty)


def tree_code(tree: Path) -> Path:
    """The `desktop_env` package of an OSWorld tree; a clear error when the folder holds task data only."""
    if not (tree / TREE_MARKER).is_file():
        raise ForgeError(
            f"{tree} holds OSWorld's task data but not its code ({TREE_MARKER} is missing): the evaluators "
            "must come from the same tree as the tasks",
            hint="point --data-dir at a whole OSWorld tree (a checkout of the pinned commit), or drop "
            "--data-dir to download it",
        )
    return tree / PACKAGE


def import_tree_package(package: Path) -> None:
    """Import the package at `package` (e.g. `<tree>/desktop_env`) under its own name, so that its
    absolute imports resolve inside the tree (`forge_eval.upstream.import_own_package`)."""
    import_own_package(package)


@contextlib.contextmanager
def tree_imports() -> Iterator[None]:
    """The context the tree's modules import in: placeholders for absent optional modules, OSWorld's
    own deprecation notices (PyMuPDF, PyPDF2) silenced."""
    with _placeholders(), warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


@cache
def desktop_env(tree: Path) -> types.SimpleNamespace:
    """The tree's getters, metrics, controllers and DesktopEnv class; a clear error when they cannot load.

    Args:
        tree: The OSWorld tree (the folder holding `evaluation_examples/` and `desktop_env/`).
    """
    package = tree_code(tree)
    _no_proxy_pool()
    try:
        with tree_imports():
            import_tree_package(package)
            getters = importlib.import_module(f"{PACKAGE}.evaluators.getters")
            metrics = importlib.import_module(f"{PACKAGE}.evaluators.metrics")
            python = importlib.import_module(f"{PACKAGE}.controllers.python")
            setup = importlib.import_module(f"{PACKAGE}.controllers.setup")
            core = importlib.import_module(f"{PACKAGE}.desktop_env")
    except ImportError as exc:
        raise ForgeError(
            f"OSWorld's checkers in {package} cannot be imported: {exc}",
            hint=f"install their dependencies: {INSTALL_HINT}",
        ) from exc
    return types.SimpleNamespace(
        tree=tree,
        getters=getters,
        metrics=metrics,
        PythonController=python.PythonController,
        SetupController=setup.SetupController,
        DesktopEnv=core.DesktopEnv,
    )


@cache
def metric_needs(tree: Path, name: str) -> str | None:
    """The missing optional package a metric or getter `name` of `tree` uses (read from its source)."""
    api = desktop_env(tree)
    func = getattr(api.metrics, name, None) or getattr(api.getters, name, None)
    if func is None:
        return None
    try:
        source = inspect.getsource(inspect.getmodule(func) or func)
    except (OSError, TypeError):
        return None
    body = inspect.getsource(func)
    for module in absent_modules():
        # A module-level import is only a problem when this function uses a name from it.
        if module in body or (f"import {module}" in source and _uses_import_of(body, source, module)):
            return OPTIONAL_MODULES[module]
    return None


def _uses_import_of(body: str, source: str, module: str) -> bool:
    names = []
    for line in source.splitlines():
        stripped = line.strip()
        if stripped.startswith(f"from {module}") and " import " in stripped:
            names += [n.strip().split(" as ")[-1] for n in stripped.split(" import ", 1)[1].split(",")]
    return any(n and n in body for n in names)
