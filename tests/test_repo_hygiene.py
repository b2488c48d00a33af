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
