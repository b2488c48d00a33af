"""Run `lint-imports` (the layer contracts in pyproject.toml) on forge_eval as it is installed.

forge_eval's sub-packages benchmarks/ analysis/ training/ reports/ live in top-level folders (setup.py's
package-dir mapping). import-linter reads a package from its folder, so it is shown the installed layout:
a temporary forge_eval/ whose entries link to forge_eval/* and to the mapped folders.
"""

import ast
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def mapping() -> dict[str, str]:
    """setup.py's ROOTS: package name -> folder."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "ROOTS" for t in node.targets):
            return ast.literal_eval(node.value)
    raise SystemExit("setup.py has no ROOTS mapping")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="forge-lint-imports-") as view:
        package = Path(view) / "forge_eval"
        package.mkdir()
        for entry in (ROOT / "forge_eval").iterdir():
            (package / entry.name).symlink_to(entry)
        for name, folder in mapping().items():
            if name != "forge_eval":
                (package / name.split(".", 1)[1]).symlink_to(ROOT / folder)
        # lint-imports puts its working directory first on sys.path: run it in the view
        lint = Path(sys.executable).with_name("lint-imports")
        return subprocess.call([str(lint), "--no-cache", str(ROOT / "pyproject.toml")], cwd=view)


if __name__ == "__main__":
    sys.exit(main())
