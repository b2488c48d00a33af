"""Map the top-level folders onto the single import root `forge_eval`.

pyproject.toml cannot list packages dynamically under a `package-dir` mapping, so the
sub-packages of each mapped folder are discovered here (benchmarks/ analysis/
training/ reports/ install as forge_eval.benchmarks etc.).
"""

from setuptools import find_packages, setup

ROOTS = {
    "forge_eval": "forge_eval",
    "forge_eval.benchmarks": "benchmarks",
    "forge_eval.analysis": "analysis",
    "forge_eval.training": "training",
    "forge_eval.reports": "reports",
}

package_dir: dict[str, str] = {}
packages: list[str] = []
for name, folder in ROOTS.items():
    package_dir[name] = folder
    packages.append(name)
    packages += [f"{name}.{sub}" for sub in find_packages(folder)]

setup(
    package_dir=package_dir,
    packages=packages,
    include_package_data=True,
    package_data={
        "": ["*.json", "*.jsonl", "*.yaml", "*.html", "*.css", "*.j2", "*.md"],
        "forge_eval.upstream": ["manifests/*.tsv"],
    },
)
