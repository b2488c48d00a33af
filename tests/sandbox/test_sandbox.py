"""The local bubblewrap sandbox: isolation, forwards, limits, deadline, stop, crash, cleanup (real bwrap)."""

import asyncio
import logging
import time
from pathlib import Path

import pytest

from forge_eval._errors import ForgeError, UsageError
from forge_eval.sandbox import SandboxLimits, SandboxSpec, python_ro_binds, start_sandbox
from tests.sandbox._sandboxes import http_server, needs_bwrap, processes_with

pytestmark = needs_bwrap

PY = "/usr/bin/python3"
PROBE = """
import os, socket, sys
def reach(port):
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET / HTTP/1.0\\r\\n\\r\\n")
        reply = b""
        while chunk := s.recv(4096):
            reply += chunk
        return reply.split(b"\\r\\n\\r\\n", 1)[-1].decode()
    except OSError as e:
        return type(e).__name__
for port in map(int, sys.argv[1:]):
    print(port, reach(port))
"""


def run(coro):  # noqa: ANN001, ANN201 (test shorthand)
    return asyncio.run(coro)


def _spec(tmp_path: Path, argv: list[str], **kw) -> SandboxSpec:  # noqa: ANN003
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return SandboxSpec(argv=argv, workdir=work, **kw)


def test_isolation_read_only_root_private_namespaces(tmp_path: Path) -> None:
    script = (
        "echo written > out.txt; touch /usr/forge-x 2>&1; touch /etc/forge-x 2>&1; echo tmp $(ls -A /tmp); "
        "hostname; ls /root 2>&1; echo procs $(ls /proc | grep -c '^[0-9]'); cat /proc/net/dev | tail -n +3; "
        "echo home=$HOME leak=${SECRET_TOKEN:-none}"
    )
    spec = _spec(tmp_path, ["/bin/sh", "-c", script])
    result = run(_wait(spec))
    assert result.status == "completed" and result.exit_code == 0
    assert (spec.workdir / "out.txt").read_text() == "written\n"  # the workdir is writable, on the host
    out = result.stdout
    assert "touch: cannot touch '/usr/forge-x': Read-only file system" in out
    assert "touch: cannot touch '/etc/forge-x': Read-only file system" in out
    assert not Path("/usr/forge-x").exists()
    lines = out.splitlines()
    # a private /tmp: empty but for the directories leading to the workdir (pytest's tmp_path is under /tmp)
    tmp_entries = next(line for line in lines if line.startswith("tmp")).split()[1:]
    work = spec.workdir.resolve()
    assert set(tmp_entries) <= ({work.parts[2]} if work.is_relative_to("/tmp") else set())
    assert "forge-sbx" in lines
    assert "No such file or directory" in out  # /root is not there at all
    procs = next(line for line in lines if line.startswith("procs"))
    assert int(procs.split()[1]) <= 6  # own PID namespace: bwrap, sh, ls, grep ... not the host's hundreds
    interfaces = [line.split(":")[0].strip() for line in lines if ":" in line and "|" not in line]
    assert "lo" in interfaces and not any(i.startswith(("eth", "ens", "veth")) for i in interfaces)
    assert f"home={spec.workdir.resolve()} leak=none" in out  # nothing of the host's environment


async def _wait(spec: SandboxSpec, **kw):  # noqa: ANN003, ANN202
    sandbox = await start_sandbox(spec, **kw)
    return await sandbox.wait()


def test_only_forwarded_ports_are_reachable(tmp_path: Path) -> None:
    """The forwarded host server answers on the sandbox's loopback; another host server (standing in for the
    proxy's control plane) is refused, on its own port and on any other."""
    with http_server(b"data plane") as data_port, http_server(b"control plane") as control_port:
        spec = _spec(
            tmp_path,
            [PY, "-c", PROBE, "18080", str(control_port), str(data_port)],
            forwards={18080: f"127.0.0.1:{data_port}"},
        )
        result = run(_wait(spec))
    assert result.status == "completed", result.stderr
    replies = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert replies["18080"] == "data plane"
    assert replies[str(control_port)] == "ConnectionRefusedError"
    assert replies[str(data_port)] == "ConnectionRefusedError"


def test_forward_to_a_unix_socket(tmp_path: Path) -> None:
    async def go() -> str:
        sock = tmp_path / "up.sock"

        async def answer(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            await r.readline()
            w.write(b"HTTP/1.0 200 OK\r\n\r\nvia unix")
            await w.drain()
            w.close()

        server = await asyncio.start_unix_server(answer, path=str(sock))
        async with server:
            result = await _wait(_spec(tmp_path, [PY, "-c", PROBE, "9000"], forwards={9000: str(sock)}))
        return result.stdout

    assert run(go()).strip() == "9000 via unix"


def test_crash_reports_exit_code(tmp_path: Path) -> None:
    result = run(_wait(_spec(tmp_path, ["/bin/sh", "-c", "echo boom >&2; exit 3"])))
    assert (result.status, result.exit_code) == ("harness_crash", 3)
    assert result.stderr == "boom\n"


def test_deadline_kills_the_whole_tree(tmp_path: Path) -> None:
    """Background children and a double-forked daemon are all gone after the deadline."""
    script = "sleep 300 & (setsid sleep 300 &) ; echo started; sleep 300"

    async def go():  # noqa: ANN202
        sandbox = await start_sandbox(_spec(tmp_path, ["/bin/sh", "-c", script], timeout_s=1.5))
        marker = f"FORGE_SANDBOX_ID={sandbox.id}"
        await asyncio.sleep(0.7)
        running = processes_with(marker)
        t0 = time.monotonic()
        result = await sandbox.wait()
        return result, running, processes_with(marker), time.monotonic() - t0

    result, running, after, waited = run(go())
    assert len(running) >= 4  # bwrap x2, sh, sleeps: the scan does see the sandbox while it runs
    assert result.status == "timeout" and result.exit_code is None
    assert result.stdout == "started\n"
    assert waited < 5
    assert after == []


def test_stop_is_idempotent_and_leaves_nothing(tmp_path: Path) -> None:
    async def go():  # noqa: ANN202
        sandbox = await start_sandbox(_spec(tmp_path, ["/bin/sh", "-c", "sleep 300 & sleep 300"]))
        await asyncio.sleep(0.3)
        first = await sandbox.stop()
        second = await sandbox.stop()
        waited = await sandbox.wait()
        return sandbox, first, second, waited

    sandbox, first, second, waited = run(go())
    assert first.status == "aborted" and first is second is waited
    assert processes_with(f"FORGE_SANDBOX_ID={sandbox.id}") == []


def test_memory_limit_ends_in_oom(tmp_path: Path) -> None:
    hog = "x = []\nwhile True: x.append(bytearray(8 << 20))"
    result = run(_wait(_spec(tmp_path, [PY, "-c", hog], limits=SandboxLimits(memory_mb=96), timeout_s=30)))
    assert result.limits["memory"] in ("cgroup-v1", "cgroup-v2")
    assert result.status == "oom"


def test_pids_limit_stops_a_fork_flood(tmp_path: Path) -> None:
    flood = "for i in $(seq 60); do sleep 5 & done 2>&1; wait; echo done"
    spec = _spec(tmp_path, ["/bin/sh", "-c", flood], limits=SandboxLimits(pids=20), timeout_s=20)
    result = run(_wait(spec))
    assert result.limits["pids"] in ("cgroup-v1", "cgroup-v2")
    assert "fork" in result.stdout.lower() or "resource temporarily unavailable" in result.stdout.lower()


def test_cpu_quota_is_written_and_the_cgroup_removed(tmp_path: Path) -> None:
    async def go() -> tuple[Path, str]:
        sandbox = await start_sandbox(
            _spec(tmp_path, ["/bin/sh", "-c", "sleep 5"], limits=SandboxLimits(cpus=0.5))
        )
        await asyncio.sleep(0.3)
        groups = Path(f"/proc/{sandbox.pid}/cgroup").read_text().splitlines()
        path = next(line.split(":", 2)[2] for line in groups if "cpu" in line.split(":")[1].split(","))
        root = next(p for p in ("/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct") if Path(p).is_dir())
        group = Path(root, path.lstrip("/"))
        quota = (group / "cpu.cfs_quota_us").read_text().strip()
        await sandbox.stop()
        return group, quota

    group, quota = run(go())
    assert group.name.startswith("forge-sbx-")
    assert quota == "50000"  # 0.5 of a 100 ms period
    assert not group.exists()


def test_rlimit_fallback_without_cgroup(tmp_path: Path) -> None:
    hog = "x = []\nwhile True: x.append(bytearray(8 << 20))"

    async def go():  # noqa: ANN202
        limits = SandboxLimits(memory_mb=96, enforce="rlimit")
        sandbox = await start_sandbox(_spec(tmp_path, [PY, "-c", hog], limits=limits, timeout_s=30))
        result = await sandbox.wait()
        spec = _spec(tmp_path, ["/bin/sh", "-c", "sleep 300 & sleep 300"], limits=limits)
        stopped = await start_sandbox(spec)
        await asyncio.sleep(0.3)
        await stopped.stop()
        return result, processes_with(f"FORGE_SANDBOX_ID={stopped.id}")

    result, leaked = run(go())
    assert result.limits == {"cpu": "none", "memory": "rlimit", "pids": "none"}
    assert result.status == "harness_crash" and "MemoryError" in result.stderr
    assert leaked == []  # the PID namespace alone takes every process down


def test_python_binds_run_the_venv(tmp_path: Path) -> None:
    import sys

    code = "import forge_eval.sandbox as b; print(b.SandboxSpec.__name__)"
    spec = _spec(tmp_path, [sys.executable, "-c", code], ro_binds=python_ro_binds())
    result = run(_wait(spec))
    assert (result.status, result.stdout) == ("completed", "SandboxSpec\n"), result.stderr


def test_no_sandbox_escape_hatch_warns(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with http_server(b"host") as port, caplog.at_level(logging.WARNING):
        spec = _spec(tmp_path, [PY, "-c", PROBE, str(port)], env={"PATH": "/usr/bin:/bin"})
        result = run(_wait(spec, no_sandbox=True))
    assert result.sandboxed is False and result.stdout.strip() == f"{port} host"  # the host is reachable
    assert "WITHOUT a sandbox" in caplog.text


def test_links_give_a_path_only_root_could_make(tmp_path: Path) -> None:
    """OSWorld's session bus at /run/user/1000/bus: /run is root's in the sandbox, the link's target not."""
    script = "mkdir -p /tmp/rt && echo here > /tmp/rt/bus && cat /run/user/1000/bus && stat -c %a /run/user"
    result = run(_wait(_spec(tmp_path, ["/bin/sh", "-c", script], links={"/run/user/1000": "/tmp/rt"})))
    assert result.status == "completed" and result.exit_code == 0, result.stderr
    assert result.stdout.split() == ["here", "755"]
    with pytest.raises(UsageError, match="below a top-level folder"):
        run(_wait(_spec(tmp_path, ["/bin/true"], links={"/run": "/tmp"})))


def test_missing_bwrap_names_the_setup_step(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ForgeError, match="bwrap is not installed") as info:
        run(_wait(_spec(tmp_path, ["/bin/true"])))
    assert "scripts/setup.d/35-sandbox.sh" in str(info.value)


def test_bad_specs_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        run(_wait(SandboxSpec(argv=["/bin/true"], workdir=tmp_path / "missing")))
    with pytest.raises(UsageError, match="neither HOST:PORT"):
        run(_wait(_spec(tmp_path, ["/bin/true"], forwards={80: "nowhere"})))
    with pytest.raises(UsageError, match="read-only bind"):
        run(_wait(_spec(tmp_path, ["/bin/true"], ro_binds=[tmp_path / "nope"])))


def test_cgroup_v2_files_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """This host has cgroup v1 controllers, so the v2 writer runs here against a directory laid out like
    a cgroup2 mount (plain files, no kernel): what it enables, creates and writes, and reads OOM kills."""
    from forge_eval.sandbox import _cgroups

    parent = tmp_path / "forge.slice"
    parent.mkdir()
    (parent / "cgroup.controllers").write_text("cpuset cpu io memory hugetlb pids\n")
    (parent / "cgroup.subtree_control").write_text("memory\n")
    monkeypatch.setattr(_cgroups, "_mounts", lambda: [(str(tmp_path), "cgroup2", {"rw"})])
    monkeypatch.setattr(_cgroups, "_own_paths", lambda: {"": "/forge.slice"})
    group = _cgroups.create(cpus=1.5, memory_mb=256, pids=64, enforce="auto")
    assert group.version == 2
    assert group.applied == {"cpu": "cgroup-v2", "memory": "cgroup-v2", "pids": "cgroup-v2"}
    (child,) = group.dirs
    assert child.parent == parent and child.name.startswith("forge-sbx-")
    assert (parent / "cgroup.subtree_control").read_text() == "+cpu +pids"
    assert (child / "memory.max").read_text() == str(256 * 1024 * 1024)
    assert (child / "pids.max").read_text() == "64"
    assert (child / "cpu.max").read_text() == "150000 100000"
    assert not group.oom_killed()
    (child / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    assert group.oom_killed()
