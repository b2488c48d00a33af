"""Stand-in modules: what upstream code imports by a name that is not (or must not be) ours, given to it only
while it loads or runs.

Upstream's files import their siblings by package paths that exist only in upstream's layout, and
third-party modules whose import-time effects would change this process (or that forge-eval replaces).
Both get the same treatment: modules put in `sys.modules` under the names upstream asks for, and taken out
again afterwards, so that nothing of forge-eval (or another tree) ever sees them. No library imports a
module against a substitute `sys.modules` and gives it back afterwards, hence this module.
"""

from __future__ import annotations

import logging
import sys
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from types import ModuleType
from typing import Any

from forge_eval._errors import ForgeError


def stand_in(name: str, *, package: bool = False, **attributes: Any) -> ModuleType:
    """A module `name` holding `attributes`; a `package` (empty `__path__`) so that its submodules import."""
    module = ModuleType(name)
    module.__dict__.update(attributes)
    if package:
        module.__path__ = []
    return module


@contextmanager
def modules_in_place(modules: Mapping[str, ModuleType]) -> Iterator[None]:
    """`modules` in `sys.modules` under their names for a while; what was there before is given back."""
    saved = {name: sys.modules.get(name) for name in modules}
    sys.modules.update(modules)
    try:
        yield
    finally:
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old


@contextmanager
def no_bytecode() -> Iterator[None]:
    """No `__pycache__` written while upstream's modules import: its tree stays as pinned (bytecode there
    would be code added to the tree, which the next run's manifest check refuses)."""
    bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:
        yield
    finally:
        sys.dont_write_bytecode = bytecode


class _NullFileHandler(logging.NullHandler):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()


@contextmanager
def stand_ins(modules: Mapping[str, ModuleType]) -> Iterator[None]:
    """`modules` in place (`modules_in_place`) and the process-wide setup calls upstream's top level makes
    inert while it runs: `logging.basicConfig` / `FileHandler` (would reconfigure our root logger, write a
    log in the working directory), `warnings.filterwarnings`; and no bytecode written (`no_bytecode`).
    Everything is given back afterwards."""
    saved = (logging.basicConfig, logging.FileHandler, warnings.filterwarnings)
    logging.basicConfig = lambda *a, **k: None  # type: ignore[assignment]
    logging.FileHandler = _NullFileHandler  # type: ignore[assignment,misc]
    warnings.filterwarnings = lambda *a, **k: None  # type: ignore[assignment]
    try:
        with no_bytecode(), modules_in_place(modules):
            yield
    finally:
        logging.basicConfig, logging.FileHandler, warnings.filterwarnings = saved  # type: ignore[misc]


class _Absent:
    """Stands in for a name from an optional module that is not installed; fails, naming the package,
    only when used (an import of it succeeds, as upstream's top-level imports need)."""

    def __init__(self, name: str, package: str, hint: str) -> None:
        self._name, self._package, self._hint = name, package, hint

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise ForgeError(
            f"upstream's code needs '{self._name}', but the package {self._package} is not installed",
            hint=self._hint,
        )

    def __getattr__(self, attr: str) -> _Absent:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Absent(f"{self._name}.{attr}", self._package, self._hint)


def absent_module(name: str, package: str, hint: str) -> ModuleType:
    """A stand-in for the optional module `name` (from `package`) that is not installed: importable,
    with every name in it failing when used (`hint` says how to install it)."""
    module = stand_in(name, package=True)

    def absent(attr: str) -> _Absent:
        if attr.startswith("__"):  # module introspection (__file__, __spec__, ...) must see a plain module
            raise AttributeError(attr)
        return _Absent(f"{name}.{attr}", package, hint)

    module.__getattr__ = absent  # type: ignore[method-assign]
    return module
