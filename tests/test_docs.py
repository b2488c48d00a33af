"""The documentation site builds offline and --strict, and documents everything the registries hold:
every benchmark, harness and CLI command has a page or a section, so a new one without docs fails."""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from mkdocs.exceptions import PluginError

from forge_eval._cli.main import cli
from forge_eval.benchmarks import BENCHMARKS
from forge_eval.harnesses import HARNESSES

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = os.environ | {"NO_MKDOCS_2_WARNING": "1"}
    # no proxy and no route: a plugin that fetched at build time would fail the build
    env |= {"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9", "NO_PROXY": ""}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "WARNING" not in done.stderr, done.stderr[-3000:]
    return out


def _ids(page: Path) -> set[str]:
    return set(re.findall(r'\sid="([^"]+)"', page.read_text(encoding="utf-8")))


def _commands(group: click.Command, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command path of the CLI, sub-commands of groups included."""
    found = [path] if path else []
    if isinstance(group, click.Group):
        ctx = click.Context(group)
        for name in group.list_commands(ctx):
            found += _commands(group.get_command(ctx, name), (*path, name))
    return found


def _product_names(registry: str) -> list[str]:
    """What forge-eval itself registers, read in a fresh interpreter as the docs build reads it: in this
    one, other tests may have registered their probes (a `judged-probe` benchmark)."""
    module = "benchmarks" if registry == "BENCHMARKS" else "harnesses"
    code = f"from forge_eval.{module} import {registry}; print(*{registry}.names(), sep=chr(10))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return out.stdout.split()


def test_every_benchmark_has_a_page_built_from_its_readme(site: Path):
    names = _product_names("BENCHMARKS")
    assert set(names) <= set(BENCHMARKS.names())
    assert len(names) >= 8
    for name in names:
        page = site / "benchmarks" / name / "index.html"
        assert page.is_file(), f"benchmark {name} has no documentation page"
        readme = (ROOT / "benchmarks" / name / "README.md").read_text(encoding="utf-8")
        title = next(line[2:].strip() for line in readme.splitlines() if line.startswith("# "))
        html = page.read_text(encoding="utf-8")
        assert f"benchmarks/{name}/README.md" in html
        assert title.split()[0] in html
    overview = (site / "benchmarks" / "index.html").read_text(encoding="utf-8")
    for name in names:
        assert f'href="{name}/"' in overview, f"benchmark {name} is not in the benchmarks overview"


def test_every_harness_has_a_section(site: Path):
    ids = _ids(site / "harnesses" / "index.html")
    names = _product_names("HARNESSES")
    assert set(names) <= set(HARNESSES.names())
    missing = [name for name in names if name not in ids]
    assert not missing, f"harnesses without a section in docs/harnesses.md: {missing}"


def test_every_embedded_model_is_on_the_models_page(site: Path):
    from forge_eval.models import EMBEDDED_MODELS

    html = (site / "models" / "index.html").read_text(encoding="utf-8")
    missing = [name for name, _ in EMBEDDED_MODELS.items() if f"<code>{name}</code>" not in html]
    assert not missing, f"embedded models missing from docs/models.md: {missing}"


def test_every_cli_command_is_in_the_reference(site: Path):
    ids = _ids(site / "reference" / "cli" / "index.html")
    paths = _commands(cli)
    assert ("ablate", "credit") in paths and ("proxy", "serve") in paths
    missing = [" ".join(p) for p in paths if "-".join(("forge-eval", *p)) not in ids]
    assert not missing, f"commands missing from the CLI reference: {missing}"
    html = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    assert "<code>--seeds</code>" in html and "UNSET" not in html


def test_schemas_are_generated_from_the_code(site: Path):
    from forge_eval.rundir import TRIAL_COLUMNS, RunResults
    from forge_eval.training.ablation import AblationConfig

    results = (site / "reference" / "results-json" / "index.html").read_text(encoding="utf-8")
    for field in RunResults.model_fields:
        assert f"<code>{field}</code>" in results, field
    trials = (site / "reference" / "trials-csv" / "index.html").read_text(encoding="utf-8")
    for column in TRIAL_COLUMNS:
        assert f"<code>{column}</code>" in trials, column
    ablation = (site / "reference" / "ablation-json" / "index.html").read_text(encoding="utf-8")
    for setting in AblationConfig.__dataclass_fields__:
        assert f"<code>{setting}</code>" in ablation, setting


def _hooks():
    spec = importlib.util.spec_from_file_location("forge_docs", ROOT / "docs" / "_hooks" / "forge_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_benchmark_without_a_readme_fails_the_build(monkeypatch, tmp_path):
    hooks = _hooks()
    (tmp_path / "mkdocs.yml").write_text("site_name: x\n")
    monkeypatch.setattr(hooks, "benchmark_names", lambda: ["newbench"])
    config = type(
        "Config", (), {"config_file_path": str(tmp_path / "mkdocs.yml"), "nav": [{"Benchmarks": []}]}
    )
    with pytest.raises(PluginError, match="newbench.*README.md"):
        hooks.on_config(config)


def test_an_undocumented_trials_column_fails_the_build(monkeypatch):
    hooks = _hooks()
    monkeypatch.delitem(hooks.TRIAL_COLUMN_DOCS, "model_turns")
    with pytest.raises(PluginError, match="model_turns"):
        hooks.trials_columns()


def _benchmark_table_script():
    spec = importlib.util.spec_from_file_location("benchmark_table", ROOT / "scripts" / "benchmark_table.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


def test_readmes_benchmark_table_is_the_one_the_cards_give(tmp_path: Path):
    """README's table and the docs' are both built from each benchmark's `card`; a stale README fails
    here (`python scripts/benchmark_table.py` rewrites it)."""
    script = _benchmark_table_script()
    readme = tmp_path / "README.md"
    readme.write_text((ROOT / "README.md").read_text(encoding="utf-8"), encoding="utf-8")
    assert not script.write(readme), "README is stale: run python scripts/benchmark_table.py"
    shipped = [n for n in BENCHMARKS.names() if type(BENCHMARKS.get(n)).__module__.startswith("forge_eval.")]
    assert len(shipped) >= 8
    for name in shipped:
        assert f"[{name}](benchmarks/{name}/README.md)" in readme.read_text(encoding="utf-8")
    readme.write_text(readme.read_text().replace("yes, 29 tasks", "yes, 28 tasks"), encoding="utf-8")
    assert script.write(readme)  # an edited row is put back


def test_the_docs_benchmark_table_is_generated(site: Path):
    html = (site / "benchmarks" / "index.html").read_text(encoding="utf-8")
    for name in BENCHMARKS.names():
        if type(BENCHMARKS.get(name)).__module__.startswith("forge_eval."):  # tests register probes
            assert type(BENCHMARKS.get(name)).card.needs.split(",")[0] in html


def test_readme_stays_a_front_page():
    """README is the two commands, one example per capability, the benchmark table, security and the
    layout; details belong in docs/ (it had grown to 178 lines)."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines: move details into docs/"
