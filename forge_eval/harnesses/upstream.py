"""Upstream Python code loaded from its pinned tree at run time, and OpenAI-style messages made Inspect's.

The web judges and the MolmoWeb template are upstream's own functions, run as they are: each module is
loaded from its file (never installed, never copied), with the sibling modules it imports by their
upstream package names given to it only while it loads, and its `print` sent to our log. The messages
upstream builds (OpenAI chat dicts) become Inspect messages part for part, so the judge model gets what
upstream's code built.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import logging
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    Content,
    ContentImage,
    ContentText,
)

from forge_eval._errors import ForgeError

log = logging.getLogger("forge_eval.upstream")
_loading = threading.RLock()  # a module's own upstream imports load inside its lock


def _log_print(*args: Any, **_: Any) -> None:
    log.debug(" ".join(str(a) for a in args))


@contextlib.contextmanager
def upstream_imports(imports: tuple[tuple[str, Path], ...]) -> Iterator[None]:
    """Make upstream modules importable by their upstream names (e.g. `agent.actions`) for a while: while
    a module that imports them loads, or while upstream code that imports them late runs."""
    with _loading, modules_in_place({name: load_module(file) for name, file in imports}):
        yield


@contextlib.contextmanager
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


@functools.cache
def load_module(path: Path, imports: tuple[tuple[str, Path], ...] = ()) -> ModuleType:
    """The upstream module in file `path`, loaded once per process.

    Args:
        path: The module's file in the pinned tree.
        imports: (upstream module name, file) of modules it imports by a package path that only exists
            in upstream's layout (e.g. `webeval.benchmarks.om2w.impl.src.utils`); each is loaded the same
            way and visible under that name only while `path` loads (`upstream_imports`).
    """
    if not path.is_file():
        raise ForgeError(
            f"the upstream tree has no {path}",
            hint="the tree must be a clone of the upstream repository at its pinned commit (-T upstream_dir)",
        )
    name = "forge_eval_upstream_" + "_".join(path.with_suffix("").parts[-4:]).replace("-", "_")
    with upstream_imports(imports) if imports else contextlib.nullcontext():
        try:
            module = exec_file(name, path)
        except ImportError as e:
            raise ForgeError(
                f"upstream's {path.name} cannot be loaded: {e}",
                hint="install the web extra: pip install 'forge-eval[web]'",
            ) from None
    module.print = _log_print  # type: ignore[attr-defined]  # upstream reports progress on stdout
    return module


def to_inspect(
    messages: list[Mapping[str, Any]], image: Callable[[str, str], list[Content]] | None = None
) -> list[ChatMessage]:
    """OpenAI chat messages (as upstream builds them) as Inspect messages, part for part.

    Args:
        messages: `{"role", "content"}` dicts; content a string or text / image_url parts.
        image: How an image part is shown instead (url, detail) -> content, for judges that cannot see
            images; None: as the image itself, with upstream's `detail` (OpenAI's "auto" when unset).
    """
    out: list[ChatMessage] = []
    for message in messages:
        content = message["content"]
        if not isinstance(content, str):
            parts: list[Content] = []
            for part in content:
                if part["type"] == "text":
                    parts.append(ContentText(text=part["text"]))
                elif part["type"] == "image_url":
                    url, detail = part["image_url"]["url"], part["image_url"].get("detail", "auto")
                    parts += image(url, detail) if image else [ContentImage(image=url, detail=detail)]
                else:
                    raise ForgeError(f"upstream built a message part of unknown type {part['type']!r}")
            content = parts
        role = message["role"]
        if role == "system":
            out.append(ChatMessageSystem(content=content))
        elif role == "user":
            out.append(ChatMessageUser(content=content))
        elif role == "assistant":
            out.append(ChatMessageAssistant(content=content))
        else:
            raise ForgeError(f"upstream built a message with role {role!r}")
    return out
