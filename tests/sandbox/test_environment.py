"""The sandbox's environment (the rollout's key among it) reaches its command exactly, and no other host uid
can read it: not on any process's command line while the sandbox starts, not in its private state (real
bwrap)."""

import asyncio
import json
import os
import subprocess
import uuid
from pathlib import Path

import pytest

from forge_eval._errors import UsageError
from forge_eval.sandbox import SandboxSpec, sandboxed_command, start_sandbox
from tests._nobody import NOBODY
from tests.sandbox._sandboxes import needs_bwrap

pytestmark = needs_bwrap
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="switching to another host uid needs root")
# Another host uid's attack: read every process's /proc/PID/cmdline over and over, looking for the secret
# (given on stdin, so that the scanner's own command line does not hold it), until its stdin closes.
SCANNER = """
import json, os, select, sys
secret, launcher = sys.stdin.buffer.readline().split()
me, passes, seen, found = str(os.getpid()).encode(), 0, set(), set()
print("scanning", flush=True)
while not select.select([sys.stdin], [], [], 0)[0]:
    for pid in os.listdir(b"/proc"):
        if not pid.isdigit() or pid == me:
            continue
        try:
            with open(b"/proc/" + pid + b"/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        seen.add(pid)
        if secret in cmdline:
            found.add(pid.decode())
    passes += 1
print(json.dumps({"passes": passes, "found": sorted(found), "saw_launcher": launcher in seen}))
"""
# The sandboxed command: write down its environment, say so, and stay until told to end.
COMMAND = (
    "import json, os; json.dump(dict(os.environ), open('env.json', 'w')); print('up', flush=True); input()"
)


def _as_nobody(*argv: str, **kw) -> subprocess.Popen:  # noqa: ANN003
    return subprocess.Popen(
        [*NOBODY, *argv], cwd="/", env={"PATH": "/usr/bin:/bin"}, **kw
    )


@as_root
def test_the_environment_is_on_no_command_line_and_in_no_file_another_uid_reads(tmp_path: Path) -> None:
    """The attack of issue 33 (finding 4), as uid 65534 while a sandbox starts and runs: the rollout key is
    on no process's command line and its private state is out of reach. Many variables stretch the moment
    a process that put them on its command line would show them (`env K=V ...` sets them one by one), so
    such a process is caught every time."""
    secret = f"rollout-key-{uuid.uuid4().hex}"
    env = {f"FORGE_PAD_{i}": "x" for i in range(20000)}
    env |= {"OPENAI_API_KEY": secret, "ODD": "a 'quoted'\nline $HOME `id` \\ \"x\""}
    spec = SandboxSpec(argv=["/usr/bin/python3", "-c", COMMAND], workdir=tmp_path, env=env)
    scanner = _as_nobody("/usr/bin/python3", "-c", SCANNER, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    scanner.stdin.write(f"{secret} {os.getpid()}\n".encode())
    scanner.stdin.flush()
    assert scanner.stdout.readline() == b"scanning\n"

    async def main() -> tuple[dict[str, str], list[tuple[bool, int, bytes]], int]:
        command = await sandboxed_command(spec)
        state = Path(command.argv[command.argv.index("/run/forge") - 1])
        process = await asyncio.create_subprocess_exec(
            *command.argv, env=command.env, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
        assert await asyncio.wait_for(process.stdout.readline(), 60) == b"up\n"
        assert state.parent.stat().st_mode & 0o077 == 0
        tries = []  # (holds the key, to root), then what uid 65534 gets of each private file, while it runs
        for path in state.parent.rglob("*"):
            if path.is_file():
                attempt = _as_nobody("/bin/cat", str(path), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                out, _ = attempt.communicate()
                tries.append((secret.encode() in path.read_bytes(), attempt.returncode, out))
        process.stdin.write(b"\n")
        await process.communicate()
        await command.close()
        return command.env, tries, process.returncode

    try:
        expected, tries, code = asyncio.run(main())
    finally:
        out, _ = scanner.communicate(b"", timeout=60)  # its stdin closes: it stops and reports
    scanned = json.loads(out)
    assert code == 0
    assert json.loads((tmp_path / "env.json").read_text()) == expected  # exactly its environment
    assert scanned["saw_launcher"] and scanned["passes"] >= 2  # the scanner reads root's command lines
    assert scanned["found"] == []
    assert any(holds for holds, _, _ in tries)  # the state holds the environment, for root alone
    assert all(returncode != 0 and out == b"" for _, returncode, out in tries)


def test_an_environment_name_the_sandbox_cannot_export_is_a_usage_error(tmp_path: Path) -> None:
    spec = SandboxSpec(argv=["/bin/true"], workdir=tmp_path, env={"NOT-A-NAME": "x"})
    with pytest.raises(UsageError, match="'NOT-A-NAME' is not a shell name"):
        asyncio.run(start_sandbox(spec))
