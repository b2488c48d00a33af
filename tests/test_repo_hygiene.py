"""Rules of the source tree that no linter checks: an import inside a function defers an optional
dependency, or reaches code that exists only in upstream's interpreter, and says so in a comment.

Every other import stands at its module's top, so that import order, circles and layers stay visible
(`scripts/lint_imports.py` checks the layers). A command that must start fast declares its interface
apart from its body (`forge_eval._lazy`) instead of deferring imports.
"""

import ast
import importlib.util
import re
from collections.abc import Iterator
from pathlib import Path

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
