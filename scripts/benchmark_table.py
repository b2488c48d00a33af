"""Write README's benchmark table from the benchmarks' own cards (`python scripts/benchmark_table.py`).

The docs build renders the same table (`<!-- forge:benchmark-table -->`); tests/test_docs.py fails when
README's copy differs from what this script writes.
"""

import re
from pathlib import Path

from forge_eval.benchmarks import benchmark_table

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(r"(<!-- forge:benchmark-table -->\n).*?(<!-- /forge:benchmark-table -->)", re.DOTALL)


def readme_table() -> str:
    return benchmark_table(lambda name: f"benchmarks/{name}/README.md")


def write(readme: Path = README) -> bool:
    """Put the generated table into `readme`; whether it changed."""
    text = readme.read_text(encoding="utf-8")
    updated = BLOCK.sub(lambda m: m.group(1) + readme_table() + m.group(2), text)
    readme.write_text(updated, encoding="utf-8")
    return updated != text


if __name__ == "__main__":
    print("README.md updated" if write() else "README.md already up to date")
