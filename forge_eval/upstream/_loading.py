"""Upstream Python code loaded from its pinned tree at run time: a file or a package, never installed,
never copied.

Each module runs as upstream wrote it, under a private module name of ours, so it never becomes (say)
`mcp_completion` for anyone else and a second tree's copy cannot collide with it. What it imports by
upstream's own names comes from stand-ins (`_stand_ins`) given to it only while it loads. One lock
serialises every load: stand-ins in `sys.modules` are process-wide for as long as a load takes.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import importlib.util
import logging
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from forge_eval._errors import ForgeError
from forge_eval.upstream._stand_ins import modules_in_place, no_bytecode, stand_ins

log = logging.getLogger("forge_eval.upstream")
_loading = threading.RLock()  # a module's own upstream imports load inside its lock


def _log_print(*args: Any, **_: Any) -> None:
    log.debug(" ".join(str(a) for a in args))


def exec_file(name: str, file: Path) -> ModuleType:
    """Execute upstream's `file` as a module named `name`, outside `sys.modules`: nothing of ours imports
    it by name, and a second tree's copy cannot collide with it."""
    spec = importlib.util.spec_from_file_location(name, file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def exec_package(name: str, folder: Path) -> ModuleType:
    """Execute upstream's package `folder` as `name`, registered in `sys.modules` so that its relative
    imports resolve inside it; when it fails, nothing of it stays registered."""
    init = folder / "__init__.py"
    spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(folder)])
    assert spec is not None and spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    try:
        spec.loader.exec_module(package)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return package


def import_own_package(package: Path) -> ModuleType:
    """Import upstream's package folder `package` (e.g. `<tree>/desktop_env`) under its own name, so that
    its absolute imports resolve inside the tree; another copy already imported (a PyPI install of the
    same name, another tree's) is dropped first."""
    name = package.name
    loaded = sys.modules.get(name)
    origin = getattr(loaded, "__file__", None) if loaded is not None else None
    if loaded is not None and origin and Path(origin).resolve().parent == package.resolve():
        return loaded
    for module_name in [n for n in sys.modules if n == name or n.startswith(name + ".")]:
        del sys.modules[module_name]
    return exec_package(name, package)


@contextlib.contextmanager
def upstream_imports(imports: tuple[tuple[str, Path], ...], *, extra: str) -> Iterator[None]:
    """Make upstream modules importable by their upstream names (e.g. `agent.actions`) for a while: while
    a module that imports them loads, or while upstream code that imports them late runs."""
    with _loading, modules_in_place({name: load_module(file, extra=extra) for name, file in imports}):
        yield


@functools.cache
def load_module(path: Path, imports: tuple[tuple[str, Path], ...] = (), *, extra: str) -> ModuleType:
    """The upstream module in file `path`, loaded once per process, its `print` sent to our log.

    Args:
        path: The module's file in the pinned tree.
        imports: (upstream module name, file) of modules it imports by a package path that only exists
            in upstream's layout (e.g. `webeval.benchmarks.om2w.impl.src.utils`); each is loaded the same
            way and visible under that name only while `path` loads (`upstream_imports`).
        extra: The forge-eval extra that installs its third-party imports (named when one is missing).
    """
    if not path.is_file():
        raise ForgeError(
            f"the upstream tree has no {path}",
            hint="the tree must be a clone of the upstream repository at its pinned commit (-T upstream_dir)",
        )
    name = "forge_eval_upstream_" + "_".join(path.with_suffix("").parts[-4:]).replace("-", "_")
    with no_bytecode(), upstream_imports(imports, extra=extra) if imports else contextlib.nullcontext():
        try:
            module = exec_file(name, path)
        except ImportError as e:
            raise ForgeError(
                f"upstream's {path.name} cannot be loaded: {e}",
                hint=f"install the {extra} extra: pip install 'forge-eval[{extra}]'",
            ) from None
    module.print = _log_print  # type: ignore[attr-defined]  # upstream reports progress on stdout
    return module


def private_name(benchmark: str, tree: Path, what: str) -> str:
    """A module name of our own for upstream's `what` from `tree` (one per tree)."""
    digest = hashlib.sha256(str(tree.resolve()).encode()).hexdigest()[:12]
    return f"forge_upstream_{benchmark}_{digest}_{what}"


def import_file(
    tree: Path, path: str, name: str, modules: Mapping[str, ModuleType], *, benchmark: str, hint: str
) -> ModuleType:
    """Upstream's module `path` of `tree`, executed under `name` with stand-ins `modules` (`stand_ins`),
    not kept in `sys.modules`.

    Raises:
        ForgeError: the tree has no such file (`hint` says which tree it must be), or it failed to import.
    """
    file = tree / path
    if not file.is_file():
        raise ForgeError(f"the {benchmark} tree {tree} has no {path}", hint=hint)
    with _loading, stand_ins(modules):
        try:
            return exec_file(name, file)
        except Exception as e:
            raise ForgeError(f"upstream's {path} failed to import: {type(e).__name__}: {e}") from e


def import_package(
    tree: Path,
    path: str,
    name: str,
    modules: Mapping[str, ModuleType],
    submodules: tuple[str, ...],
    *,
    benchmark: str,
    hint: str,
) -> dict[str, ModuleType]:
    """Upstream's package `path` of `tree` under `name` (its relative imports resolve inside it) and the
    `submodules` asked for, by their short names, imported with stand-ins `modules`. The package stays in
    `sys.modules` under `name` (its submodules import each other through it)."""
    folder = tree / path
    if not (folder / "__init__.py").is_file():
        raise ForgeError(f"the {benchmark} tree {tree} has no package {path}", hint=hint)
    with _loading, stand_ins(modules):
        if name not in sys.modules:
            exec_package(name, folder)
        try:
            return {sub: importlib.import_module(f"{name}.{sub}") for sub in submodules}
        except Exception as e:
            raise ForgeError(f"upstream's {path} failed to import: {type(e).__name__}: {e}") from e
