"""Who the real browser runs as, read from /proc: an unprivileged uid with no capabilities, Chromium's own
sandbox on (no `--no-sandbox`, seccomp on the renderers), and no way for a page to read a root-only file
even where the navigation policy is bypassed."""

from __future__ import annotations

import asyncio
import fcntl
import json
import logging
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import psutil
import pytest

from forge_eval.benchmarks.web import (
    BrowserConfig,
    BrowserCrashedError,
    BrowserSession,
    BrowserUnavailableError,
    WebEnv,
)
from forge_eval.benchmarks.web._launch import NO_SANDBOX_ENV, SANDBOX_FAILURES
from forge_eval.sandbox import SandboxUser, python_ro_binds, sandbox_user
from tests.benchmarks.web.conftest import LoopRunner

ROOT = os.geteuid() == 0
CHECKOUT = Path(__file__).resolve().parents[3]
needs_root = pytest.mark.skipif(not ROOT, reason="a root-only file and a uid to drop to need root")
_NS_GET_OWNER_UID = 0xB704  # ioctl _IO(0xb7, 0x4): the uid that created a user namespace
_OWN = {name: os.stat(f"/proc/self/ns/{name}").st_ino for name in ("user", "net", "mnt")}
_OWN_USERNS = _OWN["user"]
SECRET = "forge-root-only-7d2e"


@dataclass
class Proc:
    """What /proc says about one browser process."""

    pid: int
    status: dict[str, str]
    argv: list[str]
    userns: int
    userns_owner: int
    netns: int
    mntns: int

    @property
    def args(self) -> list[str]:
        """The command line's words (Chromium's child processes rewrite theirs into one string)."""
        return " ".join(self.argv).split()

    def ids(self, key: str) -> set[int]:
        return {int(x) for x in self.status[key].split()}


def _read(pid: int) -> Proc:
    base = Path(f"/proc/{pid}")
    status = dict(
        line.split(":\t", 1) for line in (base / "status").read_text().splitlines() if ":\t" in line
    )
    argv = (base / "cmdline").read_bytes().rstrip(b"\0").decode().split("\0")
    fd = os.open(base / "ns" / "user", os.O_RDONLY)
    try:
        owner = int.from_bytes(fcntl.ioctl(fd, _NS_GET_OWNER_UID, bytes(4)), "little")
    finally:
        os.close(fd)
    ns = {name: os.stat(base / "ns" / name).st_ino for name in ("user", "net", "mnt")}
    return Proc(pid, {k: v.strip() for k, v in status.items()}, argv, ns["user"], owner, ns["net"], ns["mnt"])


def browser_processes() -> list[Proc]:
    """Every Chromium process descended from this test process (a helper may exit while we look)."""
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            if "chrom" in child.name():
                found.append(_read(child.pid))
        except (psutil.NoSuchProcess, FileNotFoundError, ProcessLookupError):
            continue
    return found


async def only_this_browser() -> None:
    """Close the loop's other browser sessions and wait until their processes are gone, so that what
    `browser_processes()` finds next belongs to the browser the test starts."""
    await BrowserSession.close_all()
    for _ in range(100):
        if not browser_processes():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"browser processes left: {[p.argv[:1] for p in browser_processes()]}")


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.fixture
def files() -> Iterator[Path]:
    """A folder anyone may enter with a root-only file (`secret.txt`, 0600) and a public one (0644)."""
    folder = Path(tempfile.mkdtemp(prefix="forge-browser-test-"))
    folder.chmod(0o755)
    (folder / "secret.txt").write_text(SECRET)
    (folder / "secret.txt").chmod(0o600)
    (folder / "public.txt").write_text("anyone may read this")
    (folder / "public.txt").chmod(0o644)
    yield folder
    for name in ("secret.txt", "public.txt"):
        (folder / name).unlink()
    folder.rmdir()


@pytest.mark.parametrize("offline", [True, False], ids=["offline", "online"])
def test_the_browser_runs_unprivileged_with_its_own_sandbox(
    offline: bool, test_site: str, site_config: BrowserConfig, run: LoopRunner
) -> None:
    """Offline it runs in the project's sandbox too (own mount and network namespaces); online it shares
    the host's network for its egress gate."""
    config = replace(site_config, offline=offline)

    async def main() -> tuple[int | None, list[Proc]]:
        await only_this_browser()
        async with WebEnv(config) as env:
            obs = await env.start(test_site + "/")
            assert obs.title == "Action test page" and obs.screenshot.startswith(b"\x89PNG")
            assert env._session is not None and env._session.launch is not None
            launch = env._session.launch
            assert launch.sandbox and launch.env.keys() == {"HOME", "TMPDIR", "PATH", "LANG"}
            assert launch.confined == offline
            user = launch.user
            return (user.uid if user else None), browser_processes()

    uid, procs = run(main())
    assert (uid is not None) == ROOT
    expected = uid if uid is not None else os.geteuid()
    assert expected != 0
    kinds = {next((a for a in p.args if a.startswith("--type=")), "browser") for p in procs}
    assert {"browser", "--type=renderer", "--type=zygote"} <= kinds, kinds
    for p in procs:
        assert p.ids("Uid") == {expected} and p.ids("Gid") == {expected}, (p.argv[:2], p.status)
        assert "--no-sandbox" not in p.args, p.argv
        if ROOT:
            assert p.status["Groups"] == "" and p.status["NoNewPrivs"] == "1", p.status
        if p.userns == _OWN_USERNS:
            for caps in ("CapInh", "CapPrm", "CapEff", "CapAmb"):
                assert int(p.status[caps], 16) == 0, (caps, p.argv[:2], p.status[caps])
        else:  # Chromium's namespace sandbox: a user namespace the browser's own uid made
            assert p.userns_owner == expected, (p.argv[:2], p.userns_owner)
        assert (p.mntns != _OWN["mnt"]) == offline, p.argv[:2]  # only what the sandbox binds, offline
    renderers = [p for p in procs if "--type=renderer" in p.args]
    assert all(p.status["Seccomp"] == "2" for p in renderers), [p.status["Seccomp"] for p in renderers]
    # offline, no network but its own loopback (Chromium gives its sandboxed processes their own anyway)
    browser = next(p for p in procs if not any(a.startswith("--type=") for a in p.args))
    assert (browser.netns != _OWN["net"]) == offline


@pytest.mark.xfail(
    reason="known gap: passes alone and with its own folder, fails after the suite's earlier tests (CI, "
    "2026-12-02): the lingering session is not closed when asyncio.run ends; cause not found yet",
    strict=False,
)
def test_the_browser_and_its_files_end_with_its_event_loop(
    test_site: str, site_config: BrowserConfig
) -> None:
    """A loop that ends while its browser lingers for the next episode (Inspect's eval does) takes the
    browser, its sandbox and its private folder with it."""
    before = {p.pid for p in browser_processes()}

    async def main() -> tuple[Path, set[int]]:
        async with WebEnv(site_config) as env:
            await env.start(test_site + "/")
            assert env._session is not None and env._session.launch is not None
            return env._session.launch.state, {p.pid for p in browser_processes()} - before

    state, pids = asyncio.run(main())
    assert pids and not state.exists()
    for _ in range(100):
        alive = [pid for pid in pids if _alive(pid)]
        if not alive:
            break
        time.sleep(0.05)
    assert not alive


def test_a_close_cut_short_by_the_loops_end_still_ends_the_browsers_sandbox_and_files() -> None:
    """At its end `asyncio.run` cancels every task left, Playwright's own among them, so the browser's
    `close()` may raise CancelledError (the order of the cancelled tasks is arbitrary: CI saw it once); the
    session must still end the browser's sandbox, uid and private folder."""
    ended: list[str] = []

    class Browser:
        async def close(self) -> None:
            raise asyncio.CancelledError

    class Launch:
        async def close(self) -> None:
            ended.append("launch")

    async def main() -> BrowserSession:
        session = BrowserSession((0, None, (), True))
        session.browser, session.launch = Browser(), Launch()  # type: ignore[assignment]
        with pytest.raises(asyncio.CancelledError):
            await session.close()
        return session

    session = asyncio.run(main())
    assert ended == ["launch"] and session.launch is None and session.browser is None


@needs_root
@pytest.mark.parametrize("offline", [True, False], ids=["offline", "online"])
def test_a_page_cannot_read_a_root_only_file(
    offline: bool, files: Path, site_config: BrowserConfig, run: LoopRunner
) -> None:
    """A context of the benchmark's browser without the navigation policy (as if a page got past it).
    Online what stops it is the uid: the public file beside the secret one loads, so the check can fail.
    Offline the browser sees no host file at all, however readable."""
    from playwright.async_api import Error

    hidden = [files / "secret.txt"]
    shadow = Path("/etc/shadow")
    if shadow.exists() and not shadow.stat().st_mode & stat.S_IROTH:
        hidden.append(shadow)
    if offline:
        hidden += [files / "public.txt", Path(__file__)]

    async def main() -> None:
        session = await BrowserSession.acquire(replace(site_config, offline=offline))
        try:
            assert session.browser is not None
            context = await session.browser.new_context()
            for target in hidden:  # a fresh tab each: Chromium's error page commits after goto fails
                page = await context.new_page()
                with pytest.raises(
                    Error, match="ERR_ACCESS_DENIED|ERR_FILE_NOT_FOUND" if offline else "ERR_ACCESS_DENIED"
                ):
                    await page.goto(target.as_uri())
                await page.close()
            page = await context.new_page()
            shown = Path("/etc/os-release") if offline else files / "public.txt"  # what it may read
            await page.goto(shown.as_uri())
            assert shown.read_text()[:20] in await page.inner_text("body")
            # the page's own script fares no better than a navigation
            read = await page.evaluate(
                "u => fetch(u).then(r => r.text()).catch(e => 'refused: ' + e)",
                (files / "secret.txt").as_uri(),
            )
            assert SECRET not in read
            await context.close()
        finally:
            await session.release()

    run(main())


def test_the_sandbox_opt_out_warns_and_keeps_the_uid(
    site_config: BrowserConfig,
    run: LoopRunner,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv(NO_SANDBOX_ENV, "1")

    async def main() -> list[Proc]:
        session = await BrowserSession.acquire(site_config)
        try:
            assert session.launch is not None and not session.launch.sandbox
            return [p for p in browser_processes() if "--no-sandbox" in p.args]
        finally:
            await session.release()
            await session.close()

    with caplog.at_level(logging.WARNING, logger="forge_eval.benchmarks.web._launch"):
        procs = run(main())
    assert procs, "with the opt-out, Chromium is launched with --no-sandbox"
    if ROOT:
        assert all(0 not in p.ids("Uid") for p in procs), [p.status["Uid"] for p in procs]
    assert any(NO_SANDBOX_ENV in r.getMessage() for r in caplog.records)


@needs_root
@pytest.mark.parametrize("offline", [True, False], ids=["offline", "online"])
def test_a_browser_the_unprivileged_uid_cannot_run_is_a_clear_error(
    offline: bool, run: LoopRunner, tmp_path: Path
) -> None:
    hidden = tmp_path / "private"  # root-only: no other uid passes through it
    hidden.mkdir(mode=0o700)
    binary = hidden / "chromium"
    binary.write_text('#!/bin/sh\nexec /usr/lib/chromium/chromium-headless-shell "$@"\n')
    binary.chmod(0o755)

    async def main() -> None:
        await BrowserSession.acquire(BrowserConfig(executable=str(binary)))

    with pytest.raises(
        BrowserUnavailableError, match="cannot be run by an unprivileged user: .* not searchable"
    ):
        run(main())


def test_no_user_namespaces_is_a_clear_error(run: LoopRunner) -> None:
    """A stand-in binary that fails as Chromium does where its sandbox cannot start (no user namespaces
    can be turned off for one test without affecting the whole host)."""
    folder = Path(tempfile.mkdtemp(prefix="forge-browser-test-"))
    try:
        folder.chmod(0o755)
        binary = folder / "chromium"
        binary.write_text(
            f"#!/bin/sh\necho '[1:1:FATAL:zygote_host_impl_linux.cc] {SANDBOX_FAILURES[0]}!' >&2\nexit 1\n"
        )
        binary.chmod(0o755)

        async def main() -> None:
            await BrowserSession.acquire(BrowserConfig(executable=str(binary)))

        with pytest.raises(BrowserCrashedError) as error:
            run(main())
        assert "user namespaces" in (error.value.hint or "") and NO_SANDBOX_ENV in (error.value.hint or "")
    finally:
        for child in folder.iterdir():
            child.unlink()
        folder.rmdir()


# Run as a user that is not root, forge-eval has nobody to drop to: the browser runs as that user, with
# Chromium's own sandbox on all the same, and offline in a bubblewrap sandbox of its own (the user's
# namespaces). Printed as JSON from inside.
_AS_USER = """
import asyncio, json, os, sys
from forge_eval.benchmarks.web import BrowserConfig, BrowserSession, WebEnv
from tests.benchmarks.web.test_browser_user import _OWN, browser_processes

async def main():
    async with WebEnv(BrowserConfig(offline=sys.argv[1] == "offline")) as env:
        obs = await env.start()
        launch = env._session.launch
        procs = [{"uid": sorted(p.ids("Uid")), "args": p.args, "seccomp": p.status["Seccomp"],
                  "own_net": p.netns == _OWN["net"], "own_mnt": p.mntns == _OWN["mnt"]}
                 for p in browser_processes()]
        out = {"euid": os.geteuid(), "user": launch.user, "sandbox": launch.sandbox, "procs": procs,
               "confined": launch.confined, "png": obs.screenshot.startswith(b"\\x89PNG")}
    await BrowserSession.close_all()
    print(json.dumps(out))

asyncio.run(main())
"""


def _as_user(user: SandboxUser, argv: list[str]) -> list[str]:
    """`argv` run as `user` on this host's files, root's home hidden but for the interpreter and this
    checkout (either may live there), and the host's /proc as it is (a browser sandbox cannot mount its
    own under a masked one)."""
    binds = ["--bind", "/tmp", "/tmp", "--tmpfs", "/root"]
    for path in [*python_ro_binds(), CHECKOUT]:
        binds += [arg for parent in reversed(path.parents[:-1]) for arg in ("--dir", str(parent))]
        binds += ["--ro-bind", str(path), str(path)]
    return [
        *("bwrap", "--die-with-parent", "--unshare-ipc", "--ro-bind", "/", "/", "--bind", "/proc", "/proc"),
        *("--dev", "/dev", *binds, "--chdir", str(CHECKOUT), "--"),
        *user.setpriv(shutil.which("setpriv") or "setpriv"),
        *("/usr/bin/env", "-i", "HOME=/tmp", "PATH=/usr/bin:/bin", f"PYTHONPATH={CHECKOUT}", *argv),
    ]


@needs_root
@pytest.mark.parametrize("mode", ["offline", "online"])
def test_run_by_a_user_that_is_not_root_the_browser_keeps_its_sandbox(mode: str) -> None:
    """forge-eval itself run by an unprivileged user (a uid of the sandbox range, by setpriv)."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (scripts/setup.d/35-sandbox.sh)")
    with sandbox_user() as user:
        assert user is not None
        done = subprocess.run(
            _as_user(user, [sys.executable, "-c", _AS_USER, mode]),
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["euid"] == user.uid and out["user"] is None and out["sandbox"] and out["png"]
    assert out["confined"] == (mode == "offline")
    assert {"--type=renderer", "--type=zygote"} <= {a for p in out["procs"] for a in p["args"]}
    for p in out["procs"]:
        assert p["uid"] == [user.uid] and "--no-sandbox" not in p["args"], p
        assert p["own_mnt"] == (mode == "online"), p
    browser = next(p for p in out["procs"] if not any(a.startswith("--type=") for a in p["args"]))
    assert browser["own_net"] == (mode == "online")
    assert all(p["seccomp"] == "2" for p in out["procs"] if "--type=renderer" in p["args"])
