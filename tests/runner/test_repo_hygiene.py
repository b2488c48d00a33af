"""Comments and docstrings cite only files the repository has (design notes outside it do not ship)."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Citations of the project's design notes, which live outside the repository.
_CITATION = re.compile(r"(?<![\w./-])((?:reference/[\w-]+|DESIGN|PROVENANCE)\.md)")


def test_no_citation_of_a_file_the_repository_lacks():
    tracked = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "*.py", "*.sh", "*.md", "*.toml", "Makefile", ".ci/run"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    missing = []
    for name in tracked:
        path = ROOT / name
        if not path.is_file():
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            # a docs page links relative to its own folder (docs/reference/cli.md)
            cited = [
                c for c in _CITATION.findall(line) if not any((d / c).exists() for d in (ROOT, path.parent))
            ]
            missing += [f"{name}:{number}: {c}" for c in cited]
    assert missing == []
