"""Who can read a run directory: only the uid that ran it (0700, files 0600), unless `--shared-run-dir`.

Runs go into a world-traversable folder, so another uid (nobody, 65534) could read a 0644 log there: the
run directory's own modes are what keep it out.
"""

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

import tests.runner._probe_benchmark  # noqa: F401  (registers the "probe" benchmark)
from forge_eval._cli.main import cli
from forge_eval.rundir import RunDir
from tests._nobody import as_nobody
from tests.runner._recording_server import recording_server

SETPRIV = shutil.which("setpriv")
pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or SETPRIV is None, reason="reading as another uid needs root and setpriv"
)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def _other_uid_reads(path: Path) -> bool:
    """Whether uid/gid 65534 (no groups) can read `path`."""
    return as_nobody("cat", str(path)).returncode == 0


@pytest.fixture
def shared_folder() -> Iterator[Path]:
    """A folder every uid may enter (pytest's tmp_path is under a 0700 folder, which would hide the run)."""
    folder = Path(tempfile.mkdtemp(prefix="forge-run-access-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


@pytest.fixture
def run_probe(monkeypatch):
    """`forge-eval run probe` against the recording server, with extra arguments."""
    with recording_server() as (url, _seen):
        monkeypatch.setenv("REC_API_KEY", "test")

        def run(out: Path, *args: str) -> None:
            command = ["run", "probe", "--seeds", "1", "--epochs", "1", "--out", str(out), *args]
            command += ["--model", "openai-api/rec/m", "--model-base-url", url]
            result = CliRunner().invoke(cli, command, standalone_mode=False, catch_exceptions=True)
            assert result.exception is None, result.output
            assert RunDir(out).results.is_file()

        yield run


def _logs(out: Path) -> list[Path]:
    logs = sorted(RunDir(out).logs.rglob("*.eval"))
    assert logs
    return logs


def test_a_run_directory_is_private_to_its_uid(shared_folder, run_probe):
    readable = shared_folder / "readable.txt"
    readable.write_text("any uid can read this")
    readable.chmod(0o644)
    assert _other_uid_reads(readable)  # the check below fails for the modes, not for lack of a way in

    out = shared_folder / "runs" / "probe"
    run_probe(out)
    assert _mode(out) == 0o700
    run = RunDir(out)
    folders = [p for p in out.rglob("*") if p.is_dir()]
    files = [p for p in out.rglob("*") if p.is_file()]
    assert run.logs in folders and {_mode(p) for p in folders} == {0o700}
    assert {run.results, run.trials, run.run_marker, run.report} <= set(files)
    assert {_mode(p) for p in files} == {0o600}
    assert not _other_uid_reads(_logs(out)[0])
    assert not _other_uid_reads(run.results)


def test_an_existing_folder_of_other_things_keeps_its_mode_but_not_the_runs_files(shared_folder, run_probe):
    notes = shared_folder / "notes.txt"
    notes.write_text("mine")
    notes.chmod(0o644)
    run_probe(shared_folder)  # --out a folder that holds other things: only what the run writes is closed
    assert _mode(shared_folder) == 0o755 and _mode(notes) == 0o644
    assert _mode(RunDir(shared_folder).logs) == 0o700 and _mode(RunDir(shared_folder).results) == 0o600
    assert not _other_uid_reads(_logs(shared_folder)[0])
    assert _other_uid_reads(notes)


def test_shared_run_dir_leaves_the_modes_to_the_umask(shared_folder, run_probe):
    umask = os.umask(0o022)
    os.umask(umask)
    out = shared_folder / "probe"
    run_probe(out, "--shared-run-dir")
    assert _mode(out) == 0o777 & ~umask
    assert _mode(RunDir(out).results) == 0o666 & ~umask
    if umask & 0o005 == 0:
        assert _other_uid_reads(_logs(out)[0])
