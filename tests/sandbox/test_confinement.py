"""Who a sandbox runs as and what it sees (real bwrap): an unprivileged user of its own, no root-owned file
readable through a bind, no checkout root, no credential from the launcher's environment; and
`sandboxed_command` for processes launched by someone else, with pipes."""

import asyncio
import json
import os
import re
import sys
from pathlib import Path

import pytest

from forge_eval.sandbox import (
    SandboxSpec,
    python_ro_binds,
    sandbox_user,
    sandboxed_command,
    start_sandbox,
)
from forge_eval.sandbox._binds import NOT_RUNTIME
from tests.sandbox._sandboxes import needs_bwrap

pytestmark = needs_bwrap
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="a sandbox user of its own needs root to switch to")
CHECKOUT = Path(__file__).resolve().parents[2]
STATUS = "grep -E '^(Uid|Gid|Groups|CapEff|CapBnd|NoNewPrivs):' /proc/self/status"


async def _run(spec: SandboxSpec):  # noqa: ANN202
    sandbox = await start_sandbox(spec)
    return sandbox, await sandbox.wait()


@as_root
def test_runs_as_an_unprivileged_user_that_cannot_read_root_files(tmp_path: Path) -> None:
    """A root-owned 0600 file bound read-only stays unreadable (no user namespace maps root onto the
    sandbox user); the work dir, given to that user, is writable, and the host reads what it wrote."""
    work, private = tmp_path / "work", tmp_path / "private"
    work.mkdir()
    private.mkdir()
    (private / "key").write_text("root's secret\n")
    (private / "key").chmod(0o600)
    (work / "given.txt").write_text("ours\n")
    script = (
        f"id; {STATUS}; cat {private}/key; cat /etc/shadow; echo more >> given.txt; echo mine > made.txt; "
        "touch /tmp/scratch && echo tmp-writable; stat -c '%a' /tmp; cat /etc/passwd; echo home=$HOME"
    )
    spec = SandboxSpec(argv=["/bin/sh", "-c", script], workdir=work, ro_binds=[private])
    sandbox, result = asyncio.run(_run(spec))
    assert sandbox.user is not None and sandbox.user.uid >= 1000
    uid = sandbox.user.uid
    out, err = result.stdout, result.stderr
    assert f"uid={uid}(forge) gid={uid}(forge) groups={uid}(forge)" in out
    assert f"Uid:\t{uid}\t{uid}\t{uid}\t{uid}" in out
    assert re.search(r"^Groups:\s*$", out, re.M)  # no supplementary group (not root's)
    assert "CapEff:\t0000000000000000" in out and "CapBnd:\t0000000000000000" in out
    assert "NoNewPrivs:\t1" in out
    assert "root's secret" not in out and f"cat: {private}/key: Permission denied" in err
    assert "cat: /etc/shadow: Permission denied" in err
    assert "tmp-writable" in out and "\n1777\n" in out
    assert f"forge:x:{uid}:{uid}:forge sandbox:{work.resolve()}:/bin/sh" in out  # its own passwd entry
    assert "root:x:0:0" in out and out.count(":x:") == 3  # not the host's accounts
    assert f"home={work.resolve()}" in out
    assert (work / "given.txt").read_text() == "ours\nmore\n"
    assert (work / "made.txt").read_text() == "mine\n" and (work / "made.txt").stat().st_uid == uid


@as_root
def test_each_sandbox_gets_its_own_user_and_a_shared_one_on_request(tmp_path: Path) -> None:
    async def main() -> tuple[int, int, int, int]:
        a, _ = await _run(SandboxSpec(argv=["/bin/true"], workdir=tmp_path))
        b, _ = await _run(SandboxSpec(argv=["/bin/true"], workdir=tmp_path))
        with sandbox_user() as user:
            write = SandboxSpec(argv=["/bin/sh", "-c", "echo one > f"], workdir=tmp_path, user=user)
            append = SandboxSpec(argv=["/bin/sh", "-c", "echo two >> f"], workdir=tmp_path, user=user)
            c, _ = await _run(write)
            d, result = await _run(append)
            assert result.status == "completed", result.stderr
        return a.user.uid, b.user.uid, c.user.uid, d.user.uid

    a, b, c, d = asyncio.run(main())
    assert a != b and c == d
    assert (tmp_path / "f").read_text() == "one\ntwo\n"  # the second sandbox writes the first one's file


def test_python_binds_hold_the_runtime_not_the_checkout(tmp_path: Path) -> None:
    """The venv and forge_eval's own folder are bound; the checkout root (runs/, .git, the proxy's
    credentials), the other mapped folders (benchmarks/ with its answer keys, training/, ...) and tests/
    are not, and forge_eval's runtime still imports."""
    binds = python_ro_binds()
    assert not any(CHECKOUT.is_relative_to(b) for b in binds)  # neither the checkout nor a parent
    assert {p.name for p in binds if p.parent == CHECKOUT} <= {"forge_eval", ".venv"}
    imports = "import json, os, forge_eval.harnesses, forge_eval.proxy, forge_eval.sandbox"
    code = f"{imports}; print(json.dumps(os.listdir({str(CHECKOUT)!r})))"
    spec = SandboxSpec(argv=[sys.executable, "-c", code], workdir=tmp_path, ro_binds=binds)
    _, result = asyncio.run(_run(spec))
    assert result.status == "completed", result.stderr
    seen = set(json.loads(result.stdout))
    assert seen <= {p.name for p in binds if p.parent == CHECKOUT}
    assert not seen & {"runs", ".git", "tests", "pyproject.toml", ".forge-cache", *NOT_RUNTIME}


def test_sandboxed_command_runs_with_the_launchers_pipes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An MCP-style launch: our argv, the launcher's own environment (holding credentials) and pipes; the
    process sees /data, none of those variables, and everything is removed at close."""
    monkeypatch.setenv("FORGE_PROXY_ADMIN_KEY", "admin-credential")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-credential")
    echo = "import json, os, sys; print(json.dumps([os.getuid(), os.getcwd(), sorted(os.environ), input()]))"
    spec = SandboxSpec(argv=["/usr/bin/python3", "-c", echo], workdir=tmp_path, workdir_at=Path("/data"))

    async def main() -> tuple[bytes, int, Path, list[str]]:
        command = await sandboxed_command(spec)
        state = Path(command.argv[command.argv.index("/run/forge") - 1])
        assert state.is_dir()
        process = await asyncio.create_subprocess_exec(
            *command.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=dict(os.environ)
        )
        out, _ = await process.communicate(b"hello over a pipe\n")
        await command.close()
        return out, process.returncode, state, sorted(command.env)

    out, code, state, env_names = asyncio.run(main())
    assert code == 0
    uid, cwd, names, line = json.loads(out)
    assert (uid != 0) == (os.geteuid() == 0) and cwd == "/data"
    assert names == env_names  # the sandbox's environment only, not the launcher's
    assert "OPENAI_API_KEY" not in names and "FORGE_PROXY_ADMIN_KEY" not in names
    assert line == "hello over a pipe"
    assert not state.exists()  # close() removed the private state
