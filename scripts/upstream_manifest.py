"""Write the manifest of an upstream commit: every file's git blob id, from a clone of the repository.

    python scripts/upstream_manifest.py CLONE OWNER/NAME COMMIT

A manifest holds hashes only, never upstream's files; `forge_eval.upstream` checks every benchmark tree a
run reads against it (`git ls-tree` is the source of truth, so the manifest is the pinned commit's, not the
copy's on this machine).
"""

import subprocess
import sys

from forge_eval.upstream import manifest_path


def main(clone: str, repo: str, commit: str) -> None:
    listing = subprocess.run(
        ["git", "-C", clone, "ls-tree", "-r", "-z", "--full-tree", commit],
        capture_output=True,
        check=True,
    ).stdout.decode()
    rows = []
    for entry in filter(None, listing.split("\0")):
        meta, path = entry.split("\t", 1)
        _mode, kind, blob = meta.split()
        if kind == "blob":
            rows.append(f"{blob}\t{path}")
    full = subprocess.run(
        ["git", "-C", clone, "rev-parse", commit], capture_output=True, text=True, check=True
    ).stdout.strip()
    target = manifest_path(repo, full)
    target.write_text("\n".join(sorted(rows, key=lambda r: r.split("\t", 1)[1])) + "\n", encoding="utf-8")
    print(f"{target}: {len(rows)} files of {repo}@{full[:12]}")


if __name__ == "__main__":
    main(*sys.argv[1:])
