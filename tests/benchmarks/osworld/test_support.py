"""Which of the 369 OSWorld-Verified tasks the local provider runs, and the reasons for the others."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forge_eval._errors import UnknownNameError, UsageError
from forge_eval.benchmarks import NothingRunnableError


def _census(root: Path, provider: str, may_download: bool) -> tuple[list, dict[str, str]]:  # type: ignore[type-arg]
    from forge_eval.benchmarks.osworld import SupportContext, load_tasks, split_runnable

    return split_runnable(load_tasks(root), SupportContext(provider, may_download, root))


def test_offline_local_census_covers_all_369_with_reasons(osworld_root: Path) -> None:
    run, skipped = _census(osworld_root, "local", may_download=False)
    assert len(run) + len(skipped) == 369
    index = json.loads((osworld_root / "evaluation_examples/test_all.json").read_text())
    by_domain = {i: d for d, ids in index.items() for i in ids}
    # Every VS Code task is skipped for VS Code; every Drive/login task for the account.
    for task_id in index["vs_code"]:
        assert "VS Code" in skipped[task_id] or "Google Drive" in skipped[task_id]
    # Offline, no task that downloads files can run, and each says which files are missing.
    for task in run:
        assert not task.downloads(), task.id
    assert any(r.startswith("task files not downloaded") for r in skipped.values())
    # The runnable ones are the asset-free desktop tasks (VLC, GIMP, Impress, OS, infeasible).
    domains = {by_domain[t.id] for t in run}
    assert {"vlc", "gimp", "libreoffice_impress", "chrome"} <= domains
    assert "vs_code" not in domains
    assert sum(t.infeasible for t in run) >= 3


def test_chrome_tasks_run_on_chromium_and_live_sites_only_online(
    osworld_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from forge_eval.benchmarks.osworld import _support

    index = json.loads((osworld_root / "evaluation_examples/test_all.json").read_text())
    offline, skipped = _census(osworld_root, "local", may_download=False)
    chrome = {t.id for t in offline} & set(index["chrome"])
    # Preferences, bookmarks, profile and local-state getters, the active tab, infeasible ones: 11 of 46
    assert len(chrome) >= 11, sorted(chrome)
    assert {"030eeff7-b492-4218-b312-701ec99ee0cc", "af630914-714e-4a24-a7bb-f9af687d3b91"} <= chrome
    assert not [r for r in skipped.values() if "Chrome" in r]
    # what the Chrome tasks still skip for offline: the live web, task files, an account, VS Code, GNOME
    reasons = {skipped[i].split(" (")[0].split(":")[0] for i in index["chrome"] if i in skipped}
    reasons = {"its checker" if r.startswith("its checker") else r for r in reasons}
    assert reasons <= {
        "needs the live web",
        "task files not downloaded",
        "needs a Google Drive account / a login",
        "needs VS Code",
        "needs a GNOME session",
        "its checker",  # one that passes with no action on Chromium's fresh profile
    }, reasons
    assert "passes with no action" in skipped["99146c54-4f37-4ab8-9327-5f3291665e1e"]
    live = "06fe7178-4491-4589-810f-2e2bc9502122"  # opens three live sites in Chrome
    assert skipped[live] == "needs the live web (task marked proxy: true); this machine is offline"
    # online, Chromium reaches them through the run's egress gate: most Chrome tasks run
    online, online_skipped = _census(osworld_root, "local", may_download=True)
    online_chrome = {t.id for t in online} & set(index["chrome"])
    assert chrome | {live} <= online_chrome and len(online_chrome) >= 40, len(online_chrome)
    assert not [r for r in online_skipped.values() if "live web" in r and "Chromium" not in r]
    # a container has no egress gate: there the live web stays out of reach
    in_container, container_skipped = _census(osworld_root, "docker", may_download=True)
    assert live not in {t.id for t in in_container} and "live web" in container_skipped[live]
    # without Chromium, every task that uses Chrome says so
    monkeypatch.setattr(_support, "CHROMIUM", Path("/nonexistent/chromium"))
    run, without = _census(osworld_root, "local", may_download=False)
    assert not {t.id for t in run} & chrome
    assert all(without[i].startswith("needs Chromium (standing in for Google Chrome)") for i in chrome)


#: The tasks skipped before GNOME's pieces and sudo ran on the local desktop: gnome-terminal 5, nautilus 5,
#: gsettings 4, the wallpaper getter 2, the terminal's text 2; sudo 6.
GNOME_TASKS = {
    "gnome-terminal": ["2b9493d7", "2c9fc0de", "3680a5ee", "ee9a3c83", "f7dfbef3"],
    "nautilus": ["b5062e3e", "f5c13cdd", "415ef462", "5df7b33a", "aceb0368"],
    "gsettings": ["bedcedc4", "f9be0997", "3ce045a0", "a4d98375"],
    "vm_wallpaper": ["c2751594", "efcf0d81"],
    "vm_terminal_output": ["13584542", "4127319a"],
}
SUDO_TASKS = ["716a6079", "2373b66a", "9f3bb592", "a462a795", "e0df059f", "5812b315"]


def test_gnome_and_sudo_tasks_run_where_their_pieces_are_installed(
    osworld_root: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from forge_eval.benchmarks.osworld import _support

    def ids(prefixes: list[str], tasks: list) -> set[str]:  # type: ignore[type-arg]
        return {t.id for t in tasks if t.id[:8] in prefixes}

    gnome = [i for group in GNOME_TASKS.values() for i in group]
    offline, skipped = _census(osworld_root, "local", may_download=False)
    online, skipped_online = _census(osworld_root, "local", may_download=True)
    # offline the ones without task files run: gsettings 4, the terminal's text 1; sudo 3
    assert {i[:8] for i in ids(gnome, offline)} == {*GNOME_TASKS["gsettings"], "13584542"}
    assert {i[:8] for i in ids(SUDO_TASKS, offline)} == {"2373b66a", "a462a795", "e0df059f"}
    # online all 18 GNOME tasks run, and 5 of the 6 sudo tasks: the sixth makes a user account
    assert len(ids(gnome, online)) == 18
    assert {i[:8] for i in ids(SUDO_TASKS, online)} == set(SUDO_TASKS) - {"5812b315"}
    (account,) = [r for i, r in skipped_online.items() if i.startswith("5812b315")]
    assert account.startswith("needs a new user account (getent passwd)")
    assert not [r for r in skipped.values() if "GNOME" in r or "sudo" in r or "gsettings" in r]

    # what is missing is named: a GNOME program, a schema, what a root step installs
    which = _support.shutil.which
    monkeypatch.setattr(_support.shutil, "which", lambda p: None if p == "gnome-terminal" else which(p))
    _, without = _census(osworld_root, "local", may_download=True)
    for short in GNOME_TASKS["gnome-terminal"]:
        (reason,) = [r for i, r in without.items() if i.startswith(short)]
        assert reason.startswith("needs gnome-terminal (apt package gnome-terminal)"), reason
    (reason,) = [r for i, r in without.items() if i.startswith("13584542")]
    assert "needs gnome-terminal" in reason, reason
    monkeypatch.undo()
    monkeypatch.setattr(_support, "_gsettings_schemas", frozenset)
    monkeypatch.setattr(_support, "desktop_site", lambda: tmp_path)  # no desktop Python package
    monkeypatch.setattr(_support.shutil, "which", lambda p: None if p == "dpkg-query" else which(p))
    _, without = _census(osworld_root, "local", may_download=True)
    expected = {
        "f9be0997": "needs the GSettings schema org.gnome.desktop.notifications",
        "2373b66a": "its setup installs sysstat as root (apt-get install)",
        "9f3bb592": "its setup installs pysrt as root (pip install)",
    }
    for short, start in expected.items():
        (reason,) = [r for i, r in without.items() if i.startswith(short)]
        assert reason.startswith(start), reason


def test_online_makes_file_tasks_runnable_and_vm_runs_more(osworld_root: Path) -> None:
    offline, _ = _census(osworld_root, "local", may_download=False)
    online, skipped = _census(osworld_root, "local", may_download=True)
    assert len(online) > len(offline) + 100  # the ~200 tasks that only need OSWorld's task files
    vm, vm_skipped = _census(osworld_root, "vm", may_download=True)
    assert len(vm) > len(online)
    assert all(
        "Google Drive" in r or "missing" in r or "metric" in r or "getter" in r for r in vm_skipped.values()
    )


def test_selection_and_bad_names(osworld_root: Path) -> None:
    from forge_eval.benchmarks.osworld import load_tasks

    assert len(load_tasks(osworld_root, "small")) == 39
    assert len(load_tasks(osworld_root, domain="vlc")) == 17
    with pytest.raises(UsageError, match="unknown OSWorld subset 'everything'") as unknown:
        load_tasks(osworld_root, "everything")
    assert unknown.value.hint == "use one of: all, nogdrive, small, infeasible"
    with pytest.raises(UnknownNameError, match="OSWorld task 'nope'"):
        load_tasks(osworld_root, task_ids="nope")
    with pytest.raises(UnknownNameError, match="OSWorld domain 'word'"):
        load_tasks(osworld_root, domain="word")


def test_task_options_are_checked_before_anything_runs(osworld_root: Path) -> None:
    from forge_eval.benchmarks.osworld import osworld

    data = str(osworld_root)
    with pytest.raises(UsageError, match="unknown action space 'mouse'"):
        osworld(action_space="mouse", data_dir=data)
    with pytest.raises(UsageError, match="unknown observation"):
        osworld(observation="video", data_dir=data)
    with pytest.raises(UnknownNameError, match="Valid OSWorld providers: docker, local, podman, vm"):
        osworld(provider="kvm", data_dir=data)
    with pytest.raises(UsageError, match="'computer' harness"):
        osworld(harness="react", data_dir=data)
    with pytest.raises(NothingRunnableError, match="none of the 1 chosen osworld tasks can run here"):
        osworld(task_ids="0ed39f63-6049-43d4-ba4d-5fa2fe04a951", data_dir=data)


def test_vm_provider_explains_what_is_missing() -> None:
    from forge_eval._errors import ForgeError
    from forge_eval.benchmarks.osworld import make_provider

    provider = make_provider("vm")
    if provider.requirements():
        with pytest.raises(ForgeError, match="OSWorld's own VM provider cannot run here"):
            provider.start(set())
