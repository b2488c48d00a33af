"""No answer key in a sandbox the model controls (real bwrap).

A harness's sandbox (`forge-eval run --harness`, training rollouts: `_external._sandbox_spec`, whose binds
`python_ro_binds()` also gives the react program) must show the harness's runtime and nothing a grader
reads: for every benchmark of the registry, no file of its package (forgelab's tasks.yaml, weblab's
_oracle.py, checks, judges, ...), no upstream tree or cached download of its data, none of this machine's
shared task data, nor the tests' oracles. The harness still runs: the react program imports and
`forge-tool` reaches its bridge. The same holds when forge_eval is a regular install, whose non-runtime
sub-packages sit inside the bound package folder.
"""

import asyncio
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from forge_eval.benchmarks import BENCHMARKS, DataSource
from forge_eval.benchmarks._acquire import cache_root
from forge_eval.harnesses import CodexHarness, npm_prefix
from forge_eval.harnesses._external import Launch, _prepare, _sandbox_spec
from forge_eval.harnesses._toolbridge import ToolBridge
from forge_eval.harnesses._workspace import Workspace
from forge_eval.sandbox import SandboxResult, start_sandbox
from tests.sandbox._sandboxes import http_server, needs_bwrap

pytestmark = [needs_bwrap, pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox user needs root")]

CHECKOUT = Path(__file__).resolve().parents[2]
SHARED = CHECKOUT.parent / "shared"  # this machine's official task data and pinned upstream trees
FILES_PER_TREE = 20  # files probed in each shared tree, besides the tree itself
NOT_RUNTIME = ("benchmarks", "training", "analysis", "reports")

# Run in the sandbox as the harness would run it: which of the paths can it list or read, does a grep for
# answer keys find anything, and does the harness's runtime still work?
PROBE = r"""
import json, os, subprocess, sys
paths = json.load(open(sys.argv[1]))
def readable(path):
    try:
        if os.path.isdir(path):
            return bool(os.listdir(path))
        with open(path, "rb") as f:
            f.read(1)
        return True
    except OSError:
        return False
def run(*argv):
    return subprocess.run(argv, capture_output=True, text=True)
grep = run("grep", "-rl", "answer:", *json.load(open(sys.argv[2])))
runtime = run(sys.executable, "-c", "import forge_eval.harnesses._react_program")
tool = run("forge-tool", "--list")
print(json.dumps({
    "readable": [p for p in paths if readable(p)],
    "grep": grep.stdout.splitlines(),
    "runtime": [runtime.returncode, runtime.stderr[-2000:]],
    "tool": [tool.returncode, tool.stdout.strip(), tool.stderr[-2000:]],
}))
"""


def _files(folder: Path, limit: int | None = None) -> Iterator[Path]:
    """`folder` and the files under it (the first `limit` of them), without byte-code caches."""
    yield folder
    count = 0
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            if limit is not None and count >= limit:
                return
            count += 1
            yield Path(root) / name


def _locations(module: str) -> list[Path]:
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.submodule_search_locations, module
    return [Path(p) for p in spec.submodule_search_locations]


def _sources(package: str) -> list[DataSource]:
    """The data sources the benchmark's modules declare (module level, alone or in a mapping)."""
    found = []
    for name, module in list(sys.modules.items()):
        if name == package or name.startswith(package + "."):
            for value in vars(module).values():
                values = value.values() if isinstance(value, dict) else [value]
                found += [v for v in values if isinstance(v, DataSource)]
    return found


def _shipped() -> dict[str, Any]:
    """The registry's benchmarks that forge-eval ships (tests register probes of their own)."""
    return {
        name: benchmark
        for name, benchmark in BENCHMARKS.items()
        if type(benchmark).__module__.startswith("forge_eval.benchmarks.")
    }


def reference_data() -> dict[str, list[Path]]:
    """Per benchmark of the registry, the paths of its reference data that exist on this machine: its
    package's files, and its data sources' cached downloads and upstream trees."""
    found: dict[str, list[Path]] = {}
    for name, benchmark in _shipped().items():
        package = ".".join(type(benchmark).__module__.split(".")[:3])  # forge_eval.benchmarks.<name>
        paths = [f for folder in _locations(package) for f in _files(folder)]
        for source in _sources(package):
            upstream = SHARED / "upstream" / f"{source.repo.replace('/', '+')}@{source.revision[:7]}"
            cached = cache_root() / f"{source.benchmark}@{source.revision[:12]}"
            paths += [p for tree in (upstream, cached) if tree.is_dir() for p in _files(tree, FILES_PER_TREE)]
        found[name] = paths
    return found


def everything_graded() -> list[Path]:
    """Every benchmark's reference data, the shared task data and upstream trees, the user's download
    cache, the non-runtime sub-packages (benchmarks' shared kit, training) and the tests (their oracles)."""
    paths = [p for paths in reference_data().values() for p in paths]
    shared = [SHARED / "data" / "benchmarks", SHARED / "upstream"]
    trees = [tree for root in shared if root.is_dir() for tree in sorted(root.iterdir())]
    trees += [Path.home() / ".cache" / "forge-eval", cache_root(), CHECKOUT / "tests"]
    trees += [folder for name in NOT_RUNTIME for folder in _locations(f"forge_eval.{name}")]
    paths += [p for tree in trees if tree.exists() for p in _files(tree, FILES_PER_TREE)]
    return sorted(set(paths))


def test_the_registry_walk_finds_each_benchmarks_answer_keys() -> None:
    """The walk the sandbox test relies on sees every benchmark and the files named in the issue."""
    found = reference_data()
    assert set(found) == set(_shipped()) >= {"forgelab", "weblab", "osworld"} and all(found.values())
    names = {(p.parent.name, p.name) for p in found["forgelab"] + found["weblab"]}
    assert {("forgelab", "tasks.yaml"), ("weblab", "_oracle.py")} <= names
    assert "answer:" in (_locations("forge_eval.benchmarks.forgelab")[0] / "tasks.yaml").read_text()


def _probe_in_harness_sandbox(tmp_path: Path, paths: list[Path], grep_roots: list[Path]) -> dict:
    """Run PROBE in the sandbox `forge-eval run --harness codex` would start (same spec builder, binds,
    workspace and `forge-tool`), with a tool bridge that answers `--list`."""
    workspace = _prepare(Workspace(tmp_path / "sample"), ToolBridge([]))
    (workspace.work / "probe.py").write_text(PROBE)
    (workspace.work / "paths.json").write_text(json.dumps([str(p) for p in paths]))
    (workspace.work / "grep.json").write_text(json.dumps([str(p) for p in grep_roots]))
    prefix = npm_prefix()
    if not prefix.is_dir():  # harnesses not installed here: an empty stand-in keeps the binds' shape
        prefix = tmp_path / "npm"
        prefix.mkdir()
    launch = Launch([sys.executable, "probe.py", "paths.json", "grep.json"])
    with http_server(b"# Tools of this task") as tools, http_server(b"proxy") as proxy:
        spec = _sandbox_spec(
            CodexHarness(),
            launch,
            workspace,
            prefix,
            f"http://127.0.0.1:{proxy}",
            f"http://127.0.0.1:{tools}",
        )

        async def run() -> SandboxResult:
            async with await start_sandbox(spec) as sandbox:
                return await sandbox.wait()

        result = asyncio.run(run())
    assert result.status == "completed", result.stderr
    return json.loads(result.stdout)


def test_no_benchmarks_reference_data_is_visible_from_a_harness_sandbox(tmp_path: Path) -> None:
    paths = everything_graded()
    assert len(paths) > 100  # the walk found the benchmarks' files (and this machine's data, if any)
    roots = [folder for name in NOT_RUNTIME for folder in _locations(f"forge_eval.{name}")]
    roots += [SHARED, cache_root(), CHECKOUT / "tests"]
    report = _probe_in_harness_sandbox(tmp_path, paths, roots)
    assert report["readable"] == []
    assert report["grep"] == []  # `grep -rl answer:` over the benchmarks and the task data finds nothing
    assert report["runtime"][0] == 0, report["runtime"]  # the react program's imports all resolve
    assert report["tool"][:2] == [0, "# Tools of this task"], report["tool"]  # forge-tool reaches its bridge


REGULAR = r"""
import asyncio, json, sys
import forge_eval
from forge_eval.sandbox import SandboxSpec, python_ro_binds, start_sandbox
site, work, probe = sys.argv[1:4]
assert forge_eval.__file__.startswith(site), forge_eval.__file__
spec = SandboxSpec(argv=[sys.executable, "-c", probe, site], workdir=__import__("pathlib").Path(work),
                   env={"PYTHONPATH": site}, ro_binds=python_ro_binds())
async def run():
    async with await start_sandbox(spec) as sandbox:
        return await sandbox.wait()
result = asyncio.run(run())
print(json.dumps([result.status, result.stdout, result.stderr[-2000:]]))
"""

REGULAR_PROBE = r"""
import json, os, sys
package = os.path.join(sys.argv[1], "forge_eval")
seen = {}
for name in ("benchmarks", "training", "analysis", "reports"):
    try:
        seen[name] = os.listdir(os.path.join(package, name))
    except OSError as e:
        seen[name] = type(e).__name__
try:
    open(os.path.join(package, "benchmarks", "forgelab", "tasks.yaml")).read()
    seen["tasks.yaml"] = "READ"
except OSError as e:
    seen["tasks.yaml"] = type(e).__name__
import forge_eval.harnesses._react_program as program
seen["program"] = program.__file__
print(json.dumps(seen))
"""


def test_a_regular_install_shows_its_runtime_and_hides_the_rest(tmp_path: Path) -> None:
    """forge_eval laid out as a regular install lays it out (its mapped folders inside the package, as in
    a wheel's site-packages): the bound package folder shows none of its non-runtime sub-packages."""
    site = tmp_path / "site"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(_locations("forge_eval")[0], site / "forge_eval", ignore=ignore)
    for name in NOT_RUNTIME:
        shutil.copytree(_locations(f"forge_eval.{name}")[0], site / "forge_eval" / name, ignore=ignore)
    work = tmp_path / "work"
    work.mkdir()
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(site)}
    done = subprocess.run(
        [sys.executable, "-c", REGULAR, str(site), str(work), REGULAR_PROBE],
        env=env,
        cwd=tmp_path,  # not the checkout, whose forge_eval/ `-c` would import first
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    status, stdout, stderr = json.loads(done.stdout)
    assert status == "completed", stderr
    seen = json.loads(stdout)
    assert {name: seen[name] for name in NOT_RUNTIME} == {name: [] for name in NOT_RUNTIME}
    assert seen["tasks.yaml"] == "FileNotFoundError"
    assert seen["program"] == str(site / "forge_eval" / "harnesses" / "_react_program.py")
