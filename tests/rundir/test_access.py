"""`make_private`: a run's logs, records and files become this uid's only; nothing else is touched."""

import stat
from pathlib import Path

from forge_eval.rundir import RunDir, make_private


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_logs_records_and_the_runs_files_become_private_and_nothing_else(tmp_path):
    run = RunDir(tmp_path / "run")
    (run.records / "rollout-1" / "0").mkdir(parents=True)
    (run.records / "rollout-1" / "0" / "calls.jsonl").write_text("{}")
    run.logs.mkdir()
    (run.logs / "seed-0.eval").write_text("log")
    run.results.write_text("{}")
    own = run.path / "notes.txt"  # not a file of the run: left as it is
    own.write_text("mine")
    outside = tmp_path / "outside.txt"
    outside.write_text("not the run's")
    (run.logs / "link.eval").symlink_to(outside)  # chmod would follow a link out of the run
    for path in (run.path, *run.path.rglob("*"), outside):
        path.chmod(0o755 if path.is_dir() else 0o644)

    make_private(run)

    assert {_mode(p) for p in (run.logs, run.records, run.records / "rollout-1" / "0")} == {0o700}
    assert {_mode(p) for p in (run.logs / "seed-0.eval", run.results)} == {0o600}
    assert _mode(run.records / "rollout-1" / "0" / "calls.jsonl") == 0o600
    assert _mode(run.path) == 0o755 and _mode(own) == 0o644 and _mode(outside) == 0o644


def test_a_linked_logs_folder_is_not_followed(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "file").write_text("x")
    (elsewhere / "file").chmod(0o644)
    run = RunDir(tmp_path / "run")
    run.path.mkdir()
    run.logs.symlink_to(elsewhere)
    make_private(run)  # a run without its own files is fine too
    assert _mode(elsewhere / "file") == 0o644
