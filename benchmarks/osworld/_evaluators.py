"""OSWorld's own checkers (getters + metrics) and client code, from the pinned `desktop-env` wheel.

`desktop-env` declares ~70 dependencies (torch, cloud SDKs, ...) that its checkers do not need, so it is
installed with `--no-deps` plus the packages the checkers import (`forge_eval.benchmarks.osworld.install`).
A few heavy or online-only imports (OCR, audio fingerprinting, Google Drive, a PDF library) are optional:
when absent they are replaced by placeholders that fail when *used*, and the tasks whose metrics use them
are listed as skipped with the package to install.
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
from typing import Any

from forge_eval._errors import ForgeError

DESKTOP_ENV_VERSION = "1.0.2"
#: Modules OSWorld's checkers import at module level that may be left out, and the pip package of each.
OPTIONAL_MODULES = {
    "easyocr": "easyocr",
    "pydrive": "pydrive",
    "borb": "borb",
    "librosa": "librosa",
    "acoustid": "pyacoustid",
}
INSTALL_HINT = "python -m forge_eval.benchmarks.osworld.install  (or: pip install 'forge-eval[osworld]')"


class _Absent:
    """Stands in for a name from an optional module that is not installed; fails when used."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        root = self._name.split(".")[0]
        raise ForgeError(
            f"OSWorld's checker needs '{self._name}', "
            f"but the package {OPTIONAL_MODULES[root]} is not installed",
            hint=f"pip install {OPTIONAL_MODULES[root]}",
        )

    def __getattr__(self, attr: str) -> _Absent:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Absent(f"{self._name}.{attr}")


def _absent_module(name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__path__ = []
    def absent(attr: str) -> _Absent:
        if attr.startswith("__"):  # module introspection (__file__, __spec__, ...) must see a plain module
            raise AttributeError(attr)
        return _Absent(f"{name}.{attr}")

    module.__getattr__ = absent  # type: ignore[method-assign]
    return module


@cache
def absent_modules() -> frozenset[str]:
    """The optional modules that are not installed here."""
    return frozenset(m for m in OPTIONAL_MODULES if importlib.util.find_spec(m) is None)


@contextlib.contextmanager
def _placeholders() -> Iterator[None]:
    """Placeholders in `sys.modules` only while OSWorld's modules import (they keep their references).

    Left in place, they would make the rest of the process see e.g. `librosa` as importable with no
    `__spec__`, and libraries that probe optional packages (transformers, under veRL) fail on it.
    """
    installed = []
    for root in absent_modules():
        for sub in ("", ".auth", ".drive", ".pdf"):
            if root + sub not in sys.modules:
                sys.modules[root + sub] = _absent_module(root + sub)
                installed.append(root + sub)
    try:
        yield
    finally:
        for name in installed:
            sys.modules.pop(name, None)


def _no_proxy_pool() -> None:
    """Give OSWorld's proxy pool an empty list: its settings (a paid proxy service) are not public data.

    Without one it prints a file-not-found message at import; tasks that need the proxy are skipped.
    """
    if "PROXY_CONFIG_FILE" not in os.environ:
        empty = Path(tempfile.gettempdir()) / "forge-osworld-no-proxies.json"
        if not empty.exists():
            empty.write_text("[]")
        os.environ["PROXY_CONFIG_FILE"] = str(empty)


@cache
def desktop_env() -> types.SimpleNamespace:
    """`desktop_env`'s getters, metrics, controllers and DesktopEnv class; a clear error when missing."""
    if importlib.util.find_spec("desktop_env") is None:
        raise ForgeError(
            f"OSWorld's checkers (the PyPI package desktop-env=={DESKTOP_ENV_VERSION}) are not installed",
            hint=INSTALL_HINT,
        )
    _no_proxy_pool()
    try:
        # deprecation notices of PyMuPDF/PyPDF2 are aimed at OSWorld's code
        with _placeholders(), warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            getters = importlib.import_module("desktop_env.evaluators.getters")
            metrics = importlib.import_module("desktop_env.evaluators.metrics")
            python = importlib.import_module("desktop_env.controllers.python")
            setup = importlib.import_module("desktop_env.controllers.setup")
            core = importlib.import_module("desktop_env.desktop_env")
    except ImportError as exc:
        raise ForgeError(
            f"OSWorld's checkers cannot be imported: {exc}",
            hint=f"install their dependencies: {INSTALL_HINT}",
        ) from exc
    return types.SimpleNamespace(
        getters=getters,
        metrics=metrics,
        PythonController=python.PythonController,
        SetupController=setup.SetupController,
        DesktopEnv=core.DesktopEnv,
    )


@cache
def metric_needs(name: str) -> str | None:
    """The missing optional package a metric or getter `name` uses, read from its source; None if none."""
    api = desktop_env()
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
