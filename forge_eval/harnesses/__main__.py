"""`python -m forge_eval.harnesses pins`: the pinned npm packages, one `name version` per line, in install
order (Node 24 first). scripts/setup.d/30-harnesses.sh reads the pins from here."""

import sys

from forge_eval.harnesses import HARNESSES, ExternalHarness


def pins() -> list[str]:
    seen: dict[str, str] = {}
    for _, harness in HARNESSES.items():
        if isinstance(harness, ExternalHarness):
            for package in harness.packages:
                seen.setdefault(package.name, package.version)
    # Node first: the others install under it (OpenClaw silently installs a placeholder under old Node)
    return sorted((f"{n} {v}" for n, v in seen.items()), key=lambda line: not line.startswith("node-"))


def main(argv: list[str]) -> int:
    if argv != ["pins"]:
        print("usage: python -m forge_eval.harnesses pins", file=sys.stderr)
        return 2
    print("\n".join(pins()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
