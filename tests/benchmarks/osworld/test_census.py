"""The OSWorld census (README and docs page) is what the skip rules say, and what a dry run lists."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "osworld_census.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("osworld_census", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def rows(osworld_root: Path, desktop_ready: None) -> list:  # type: ignore[type-arg]
    """The census on this machine (set up by scripts/setup.d, as the README's table assumes)."""
    from forge_eval.benchmarks.osworld import census

    return census(osworld_root)


def test_each_provider_once_per_network_and_every_task_counted(rows: list) -> None:  # type: ignore[type-arg]
    from forge_eval.benchmarks.osworld import PROVIDERS
    from forge_eval.benchmarks.osworld._census import NETWORKS

    for network in NETWORKS:
        mine = [r for r in rows if r.network == network]
        assert sorted(p for r in mine for p in r.providers) == PROVIDERS.names()
        for row in mine:
            assert row.runnable + sum(n for _, n in row.reasons) == row.total == 369
    offline, online = (
        {p: r.runnable for r in rows if r.network == network for p in r.providers} for network in NETWORKS
    )
    assert all(online[p] > offline[p] for p in offline)  # ~200 tasks need only their files


def test_the_readme_table_is_current(rows: list) -> None:  # type: ignore[type-arg]
    from forge_eval.benchmarks.osworld import census_table

    readme = (ROOT / "benchmarks" / "osworld" / "README.md").read_text(encoding="utf-8")
    script = _script()
    hint = "no longer matches the skip rules: run python scripts/osworld_census.py"
    assert script.with_table(readme, census_table(rows)) == readme, f"benchmarks/osworld/README.md {hint}"
    for path in script.SUMMARIES:
        summary = path.read_text(encoding="utf-8")
        assert script.with_counts(summary, rows) == summary, f"{path.name}: OSWorld's counts {hint}"


def test_the_script_rewrites_a_stale_table(tmp_path: Path, osworld_root: Path, rows: list) -> None:  # type: ignore[type-arg]
    from forge_eval.benchmarks.osworld import census_table

    script = _script()
    stale = tmp_path / "README.md"
    stale.write_text(f"# t\n\n{script.BEGIN}\n| old | table |\n{script.END}\n\nafter\n", encoding="utf-8")
    summary = tmp_path / "SUMMARY.md"
    summary.write_text("| osworld | 1 of 2 tasks offline, 3 with task files downloaded |\n", encoding="utf-8")
    command = [sys.executable, str(SCRIPT), "--data-dir", str(osworld_root), "--readme", str(stale)]
    command += ["--summary", str(summary)]
    checked = subprocess.run([*command, "--check"], capture_output=True, text=True, timeout=300)
    assert checked.returncode == 1 and "differs" in checked.stdout
    assert subprocess.run(command, capture_output=True, text=True, timeout=300).returncode == 0
    expected = f"# t\n\n{script.BEGIN}\n{census_table(rows)}{script.END}\n\nafter\n"
    assert stale.read_text(encoding="utf-8") == expected
    offline, online = (r.runnable for r in rows if "local" in r.providers)
    counts = f"{offline} of 369 tasks offline, {online} online"
    assert summary.read_text(encoding="utf-8") == f"| osworld | {counts} |\n"


def test_a_dry_run_lists_what_the_census_counts(
    osworld_root: Path, rows: list, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:  # type: ignore[type-arg]
    """Online (task files downloadable), `forge-eval run osworld --dry-run -T provider=P` skips what the
    census row of P says, reason for reason."""
    from forge_eval._cli.main import cli
    from forge_eval.benchmarks.osworld import _support
    from forge_eval.benchmarks.osworld._census import NETWORKS

    monkeypatch.setattr(_support, "online", lambda: True)
    network = next(label for label, may_download in NETWORKS.items() if may_download)
    for row in (r for r in rows if r.network == network):
        provider = row.providers[0]
        args = [
            "run",
            "osworld",
            "--dry-run",
            "--json",
            "--data-dir",
            str(osworld_root),
            "--out",
            str(tmp_path),
        ]
        result = CliRunner().invoke(cli, [*args, "-T", f"provider={provider}"], standalone_mode=False)
        plan = json.loads(result.output)
        assert len(plan["task_ids"]) == row.runnable
        assert plan["skipped_by_reason"] == dict(row.reasons)
    assert list(tmp_path.iterdir()) == []
