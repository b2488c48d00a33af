"""Upstream code loaded through forge_eval.upstream: stand-ins only while it loads, nothing of it left in
this process's `sys.modules`, logging or the tree; a clear error for a missing file or dependency."""

from __future__ import annotations

import logging
import sys
import warnings
from pathlib import Path

import pytest

from forge_eval._errors import ForgeError
from forge_eval.upstream import (
    UpstreamVenv,
    absent_module,
    import_file,
    import_own_package,
    import_package,
    load_module,
    modules_in_place,
    private_name,
    stand_in,
    upstream_imports,
)

UPSTREAM_FILE = """
import logging, warnings
import fakelib
from fakelib.sub import VALUE
logging.basicConfig(level=logging.DEBUG)
warnings.filterwarnings("ignore")
handler = logging.FileHandler("upstream.log")
ANSWER = fakelib.ask() + VALUE
"""


def _tree(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "mod.py").write_text(UPSTREAM_FILE)
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "pkg" / "inner.py").write_text("from .helper import twice\nRESULT = twice(21)\n")
    (tree / "pkg" / "helper.py").write_text("def twice(x):\n    return 2 * x\n")
    return tree


def _fakelib() -> dict:
    sub = stand_in("fakelib.sub", VALUE=1)
    return {"fakelib": stand_in("fakelib", package=True, ask=lambda: 41, sub=sub), "fakelib.sub": sub}


def test_a_file_loads_with_stand_ins_that_are_gone_afterwards(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # as a run without PYTHONDONTWRITEBYTECODE
    tree = _tree(tmp_path)
    setup = (logging.basicConfig, logging.FileHandler, warnings.filterwarnings)
    name = private_name("demo", tree, "mod")
    module = import_file(tree, "mod.py", name, _fakelib(), benchmark="Demo", hint="a demo tree")
    assert module.ANSWER == 42
    assert "fakelib" not in sys.modules and "fakelib.sub" not in sys.modules and name not in sys.modules
    assert (logging.basicConfig, logging.FileHandler, warnings.filterwarnings) == setup
    assert not (tmp_path / "upstream.log").exists()  # its log file was never opened
    assert not list(tree.rglob("__pycache__"))  # the tree stays as pinned


def test_a_package_resolves_its_relative_imports_under_a_private_name(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    name = private_name("demo", tree, "pkg")
    try:
        modules = import_package(tree, "pkg", name, {}, ("inner",), benchmark="Demo", hint="a demo tree")
        assert modules["inner"].RESULT == 42 and modules["inner"].__name__ == f"{name}.inner"
        assert "pkg" not in sys.modules
    finally:
        for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
            del sys.modules[key]


def test_a_missing_file_or_package_names_the_tree_and_how_to_get_it(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    with pytest.raises(ForgeError, match="the Demo tree .* has no nothing.py") as caught:
        import_file(tree, "nothing.py", "x", {}, benchmark="Demo", hint="check out demo at abc123")
    assert "abc123" in str(caught.value.hint)
    with pytest.raises(ForgeError, match="has no package nothing"):
        import_package(tree, "nothing", "x", {}, (), benchmark="Demo", hint="check out demo at abc123")


def test_a_module_loads_once_and_its_missing_dependency_names_the_extra(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # as a run without PYTHONDONTWRITEBYTECODE
    tree = tmp_path / "t"
    tree.mkdir()
    (tree / "utils.py").write_text("def helper():\n    return 'from utils'\n")
    (tree / "judge.py").write_text("from upstream_pkg.utils import helper\nSAID = helper()\n")
    (tree / "broken.py").write_text("import forge_eval_no_such_dependency\n")
    imports = (("upstream_pkg.utils", tree / "utils.py"),)
    judge = load_module(tree / "judge.py", imports, extra="demo")
    assert judge.SAID == "from utils" and "upstream_pkg.utils" not in sys.modules
    assert load_module(tree / "judge.py", imports, extra="demo") is judge
    with upstream_imports(imports, extra="demo"):
        assert sys.modules["upstream_pkg.utils"].helper() == "from utils"
    assert "upstream_pkg.utils" not in sys.modules
    assert not list(tree.rglob("__pycache__"))  # the tree stays as pinned
    with pytest.raises(ForgeError, match="broken.py cannot be loaded") as caught:
        load_module(tree / "broken.py", extra="demo")
    assert "forge-eval[demo]" in str(caught.value.hint)


def test_a_venv_is_ready_only_for_the_requirements_it_was_built_from(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "requirements.txt").write_text("six==1.16.0\n")
    venv = UpstreamVenv("demo", "Demo", tmp_path / "venv", ("requirements.txt",), "FORGE_DEMO_VENV")
    key = venv.key(tree)
    assert not venv.ready(tree)
    (venv.path / "bin").mkdir(parents=True)
    venv.python.write_text("")
    (venv.path / ".forge-demo-venv").write_text(key + "\n")
    assert venv.ready(tree) and venv.ensure(tree) == venv.python  # built: nothing to do
    (tree / "requirements.txt").write_text("six==1.17.0\n")
    assert venv.key(tree) != key and not venv.ready(tree)


def test_an_absent_optional_module_imports_and_fails_only_when_used():
    module = absent_module("nosuchmod", "nosuch-pkg", "pip install nosuch-pkg")
    with modules_in_place({"nosuchmod": module}):
        from nosuchmod import sub  # noqa: PLC0415 - the import upstream's top level makes

        with pytest.raises(ForgeError, match="nosuch-pkg is not installed") as failed:
            sub.call(1)
        assert failed.value.hint == "pip install nosuch-pkg"
        assert not hasattr(module, "__spec_origin__")
    assert "nosuchmod" not in sys.modules


def test_a_trees_own_package_replaces_another_copy(tmp_path: Path):
    for tree in ("a", "b"):
        package = tmp_path / tree / "treepkg"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text(f"WHERE = {tree!r}\n")
    try:
        assert import_own_package(tmp_path / "a" / "treepkg").WHERE == "a"
        assert import_own_package(tmp_path / "a" / "treepkg") is sys.modules["treepkg"]
        assert import_own_package(tmp_path / "b" / "treepkg").WHERE == "b"
    finally:
        sys.modules.pop("treepkg", None)
