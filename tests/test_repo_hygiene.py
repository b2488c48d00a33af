"""Rules of the source tree that no linter checks: an import inside a function defers an optional
dependency, or reaches code that exists only in upstream's interpreter, and says so in a comment.

Every other import stands at its module's top, so that import order, circles and layers stay visible
(`scripts/lint_imports.py` checks the layers). A command that must start fast declares its interface
apart from its body (`forge_eval._lazy`) instead of deferring imports.
"""

import ast
import importlib.metadata
import importlib.util
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]

# A comment on the import's lines, or on the comment and import lines right above it, saying why.
REASON = re.compile(r"#.*\b(optional|upstream)", re.IGNORECASE)


def _sources() -> Iterator[Path]:
    """Every module of forge_eval, through setup.py's package-dir mapping (as scripts/lint_imports.py)."""
    spec = importlib.util.spec_from_file_location("lint_imports", ROOT / "scripts" / "lint_imports.py")
    lint_imports = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lint_imports)
    for folder in lint_imports.mapping().values():
        yield from sorted((ROOT / folder).rglob("*.py"))


def _explained(lines: list[str], node: ast.Import | ast.ImportFrom) -> bool:
    """Whether a comment saying `optional` or `upstream` sits on the import's lines or on the run of
    comment and import lines right above it (one comment may explain a block of imports)."""
    own = lines[node.lineno - 1 : node.end_lineno]
    above = []
    for line in reversed(lines[: node.lineno - 1]):
        stripped = line.strip()
        if not stripped.startswith(("#", "import ", "from ")):
            break
        above.append(stripped)
    return any(REASON.search(line) for line in [*own, *above])


def unexplained_local_imports(path: Path) -> list[str]:
    """`file:line import ...` for every import inside a function of `path` without its reason."""
    text = path.read_text()
    lines = text.splitlines()
    found = []
    for function in ast.walk(ast.parse(text)):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Import | ast.ImportFrom) and not _explained(lines, node):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {lines[node.lineno - 1].strip()}")
    return found


def test_function_local_imports_defer_an_optional_dependency_and_say_so():
    found = [line for path in _sources() for line in unexplained_local_imports(path)]
    assert not found, (
        "imports inside functions that defer no optional dependency: move them to the module's top, or say "
        "which optional dependency (or upstream-only module) they defer in a comment:\n" + "\n".join(found)
    )


def test_the_rule_tells_a_deferral_from_a_lazy_import(tmp_path: Path, monkeypatch):
    monkeypatch.setattr("tests.test_repo_hygiene.ROOT", tmp_path)
    source = tmp_path / "module.py"
    source.write_text(
        "def a():\n"
        "    # optional dependency (the `k8s` extra)\n"
        "    from kubernetes import client\n"
        "    import kubernetes.config\n"
        "\n"
        "def b():\n"
        "    import torch  # optional: installed by scripts/setup.d/40-verl.sh\n"
        "\n"
        "def c():\n"
        "    # deferred: loads pandas\n"
        "    import pandas\n"
        "\n"
        "def d():\n"
        "    x = 1  # optional\n"
        "    import json\n"
    )
    assert unexplained_local_imports(source) == ["module.py:11 import pandas", "module.py:15 import json"]


def _distributions_of_the_base_install() -> set[str]:
    """forge-eval's required distributions and everything they require, without any extra."""
    found, todo = set(), ["forge-eval"]
    while todo:
        name = todo.pop()
        try:
            requires = importlib.metadata.distribution(name).requires or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for line in requires:
            requirement = Requirement(line)
            key = canonicalize_name(requirement.name)
            wanted = requirement.marker is None or requirement.marker.evaluate({"extra": ""})
            if key not in found and wanted:
                found.add(key)
                todo.append(requirement.name)
    return found


def test_the_base_install_imports_every_package_and_the_cli_without_the_extras():
    """`make run` installs no extra (the osworld, web, k8s, ray extras come with the tests' set-up), so a
    top-level import of an extra's module breaks the main job and the set-up scripts that import the
    benchmark registry (CI once failed on `lxml` in `osworld._waits`)."""
    base = _distributions_of_the_base_install()
    extras = {
        canonicalize_name(Requirement(line).name)
        for line in importlib.metadata.distribution("forge-eval").requires or []
        if Requirement(line).marker is not None and "extra" in str(Requirement(line).marker)
    }
    blocked = sorted(
        {
            module
            for module, owners in importlib.metadata.packages_distributions().items()
            if {canonicalize_name(owner) for owner in owners} <= extras - base
        }
    )
    assert "lxml" in blocked and "kubernetes" in blocked  # the check blocks what it means to
    program = (
        "import importlib, sys\n"
        f"blocked = {blocked!r}\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in blocked:\n"
        "            raise ModuleNotFoundError(f'{name} (an extra, blocked)', name=name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "for name in ('benchmarks', 'harnesses', 'training', 'analysis', 'reports', '_cli.main'):\n"
        "    importlib.import_module('forge_eval.' + name)\n"
        "from forge_eval._cli.main import main\n"
        "sys.argv = ['forge-eval', 'list']\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


# Loading a module from a file, or writing `sys.modules`, is how upstream code gets in: only
# forge_eval.upstream does it (its loaders and stand-in modules), so that every load is serialised, named
# privately and given back. The exceptions, with why:
UPSTREAM_ROOM = ROOT / "forge_eval" / "upstream"
LOADING_EXCEPTIONS = {
    # runs inside upstream's own interpreter (the desktop's), never imported by forge-eval
    "benchmarks/osworld/_inside/": "code of upstream's interpreter",
}
_LOADERS = {"spec_from_file_location", "module_from_spec", "exec_module"}
_MODULES_WRITES = {"update", "setdefault", "pop", "popitem", "clear", "__setitem__", "__delitem__"}


def _is_sys_modules(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "modules"
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
    )


def upstream_loading(path: Path) -> list[str]:
    """`file:line what` for every module load from a file and every write to `sys.modules` in `path`."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        what = None
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in _LOADERS:
                what = name
            elif name in _MODULES_WRITES and _is_sys_modules(getattr(func, "value", None)):
                what = f"sys.modules.{name}"
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete):
            targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
            if any(isinstance(t, ast.Subscript) and _is_sys_modules(t.value) for t in targets):
                what = "sys.modules[...] " + ("del" if isinstance(node, ast.Delete) else "=")
        if what:
            found.append((node.lineno, f"{path.relative_to(ROOT)}:{node.lineno} {what}"))
    return [line for _, line in sorted(found)]


def _excepted(path: Path) -> bool:
    relative = path.relative_to(ROOT).as_posix()
    return any(relative.startswith(rule) for rule in LOADING_EXCEPTIONS if rule.endswith("/"))


def test_upstream_code_is_loaded_only_in_forge_eval_upstream():
    outside = {}
    for path in _sources():
        if path.is_relative_to(UPSTREAM_ROOM) or _excepted(path):
            continue
        found = upstream_loading(path)
        if found:
            outside[path.relative_to(ROOT).as_posix()] = found
    excepted_files = {rule for rule in LOADING_EXCEPTIONS if not rule.endswith("/")}
    unexplained = [line for file, lines in outside.items() if file not in excepted_files for line in lines]
    assert not unexplained, (
        "modules loaded from files or sys.modules written outside forge_eval/upstream: load upstream code "
        "through forge_eval.upstream (load_module, import_file, import_package, stand_ins):\n"
        + "\n".join(unexplained)
    )
    stale = sorted(excepted_files - set(outside))
    assert not stale, f"exceptions that no longer load anything: drop them from LOADING_EXCEPTIONS: {stale}"
    assert upstream_loading(UPSTREAM_ROOM / "_loading.py"), "the rule no longer sees the room's own loaders"


def test_the_loading_rule_sees_each_form(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    source = tmp_path / "m.py"
    source.write_text(
        "import importlib.util, sys\n"
        "from importlib.util import spec_from_file_location\n"
        "spec = spec_from_file_location('x', 'x.py')\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "sys.modules['x'] = module\n"
        "del sys.modules['x']\n"
        "sys.modules.update({})\n"
        "sys.modules.pop('x', None)\n"
        "seen = sys.modules.get('x')\n"
        "ok = sys.modules['__main__']\n"
    )
    assert [line.split(" ", 1)[1] for line in upstream_loading(source)] == [
        "spec_from_file_location",
        "module_from_spec",
        "exec_module",
        "sys.modules[...] =",
        "sys.modules[...] del",
        "sys.modules.update",
        "sys.modules.pop",
    ]
