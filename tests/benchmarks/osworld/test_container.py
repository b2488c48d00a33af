"""The container provider on a real engine (Debian's docker.io), and OSWorld's own VM provider up to its
downloads.

`-T provider=docker` runs the same tasks as `local`, and a scripted agent gets the same verdicts from
OSWorld's checkers on both; the container keeps the agent in as the sandbox does (no host file, host port,
credential or capability; the grader's channel cannot be taken over). The engine is started by
scripts/setup.d/65-container-engine.sh; the tests skip only where it cannot start, saying why.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from inspect_ai import eval as inspect_eval

from tests._nobody import as_nobody
from tests.benchmarks.osworld._oracles import ORACLES
from tests.benchmarks.osworld._scripted import scripted_model
from tests.benchmarks.osworld.test_channel import _ATTACK, FORGED

REPO = Path(__file__).resolve().parents[3]
SETUP = REPO / "scripts" / "setup.d" / "65-container-engine.sh"
VLC_TASK = "9195653c-f4aa-453d-aa95-787f6ccfaae9"
GIMP_TASK = "7b7617bd-57cc-468e-9c91-40c4ec2bcb3d"
#: Files the engine itself puts in every container (its own per-container copies, not host files).
ENGINE_FILES = {"/etc/resolv.conf", "/etc/hostname", "/etc/hosts"}
SECRET = "forge-test-secret-7f3a"


@pytest.fixture(scope="session")
def docker_engine() -> None:
    """dockerd answering (started by the setup script if it is not); skip only where it cannot start."""
    if os.geteuid() != 0:
        pytest.skip("the docker provider needs root (its channels enter the container's namespace)")
    if shutil.which("dockerd") is None:
        pytest.skip(f"no container engine: docker.io is not installed ({SETUP.relative_to(REPO)})")
    engine = subprocess.run(["bash", str(SETUP), "--engine-only"], capture_output=True, text=True)
    if engine.returncode != 0:
        pytest.skip(f"dockerd cannot start here: {(engine.stdout + engine.stderr).strip()[-400:]}")


@pytest.fixture(scope="session")
def docker_ready(osworld_root: Path, docker_engine: None) -> None:
    """The engine running and the desktop image built (once: minutes on a fresh machine)."""
    from forge_eval.benchmarks.osworld._evaluators import desktop_env

    images = subprocess.run(["bash", str(SETUP)], capture_output=True, text=True)
    assert images.returncode == 0, (images.stdout + images.stderr)[-2000:]
    desktop_env(osworld_root)


@pytest.fixture
def container(osworld_root: Path, docker_ready: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    from forge_eval.benchmarks.osworld import ContainerDesktop
    from forge_eval.benchmarks.osworld.install import desktop_site

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)  # a credential of the run: must not reach the desktop
    desktop = ContainerDesktop(engine="docker", site_dir=desktop_site(), tree=osworld_root).start()
    try:
        yield desktop
    finally:
        desktop.stop()


def _exec(desktop: object, *argv: str) -> bytes | None:
    """What `argv` prints, run by the engine in the container as its user (its server may be dead)."""
    done = subprocess.run(
        ["docker", "exec", str(getattr(desktop, "container", None)), *argv], capture_output=True
    )
    return done.stdout if done.returncode == 0 else None


def _read(desktop: object, path: str) -> bytes | None:
    return _exec(desktop, "cat", path)


def _run_scripted(root: Path, provider: str, task_id: str, replies: list[str], log_dir: Path) -> float:
    from forge_eval.benchmarks.osworld import osworld

    task = osworld(
        task_ids=task_id,
        provider=provider,
        data_dir=str(root),
        max_steps=3,
        pause=0.3,
        ready_wait=0.0,
        settle_wait=0.0,
    )
    (log,) = inspect_eval(
        task, model=scripted_model(replies), log_dir=str(log_dir), display="none", max_samples=1
    )
    assert log.status == "success", log.error
    (sample,) = log.samples or []
    assert sample.scores is not None
    return float(sample.scores["osworld_scorer"].value)


def test_docker_runs_the_tasks_local_runs(osworld_root: Path) -> None:
    """The same rules; online, only the tasks that open live sites stay local (no egress gate in a
    container yet), each skipped saying so."""
    from forge_eval.benchmarks.osworld import runnable

    local, local_skipped = runnable(osworld_root, "local")
    docker, docker_skipped = runnable(osworld_root, "docker")
    local_ids, docker_ids = {t.id for t in local}, {t.id for t in docker}
    assert docker_ids <= local_ids and len(docker_ids) >= 20
    assert all("egress gate" in docker_skipped[i] for i in local_ids - docker_ids)
    assert all(docker_skipped[i] == reason for i, reason in local_skipped.items())


@pytest.mark.slow
@pytest.mark.e2e
def test_a_scripted_agent_gets_the_same_verdicts_on_docker_as_on_local(
    osworld_root: Path, desktop_ready: None, docker_ready: None, tmp_path: Path
) -> None:
    runs = {
        (VLC_TASK, "oracle"): [f"```python\n{ORACLES[VLC_TASK][1]}```", "```DONE```"],
        (GIMP_TASK, "oracle"): [f"```python\n{ORACLES[GIMP_TASK][1]}```", "```DONE```"],
        (VLC_TASK, "nothing"): ["```DONE```"],
    }
    verdicts = {
        provider: {
            key: _run_scripted(osworld_root, provider, key[0], replies, tmp_path / provider)
            for key, replies in runs.items()
        }
        for provider in ("local", "docker")
    }
    assert verdicts["docker"] == verdicts["local"]
    assert verdicts["docker"] == {
        (VLC_TASK, "oracle"): 1.0,
        (GIMP_TASK, "oracle"): 1.0,
        (VLC_TASK, "nothing"): 0.0,
    }


_PROBE = """
import json, os, socket
found = {}
def attempt(name, action):
    try:
        found[name] = {"ok": True, "value": action()}
    except Exception as exc:
        found[name] = {"ok": False, "error": type(exc).__name__}
def environments():
    seen = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            seen.append(open(f"/proc/{pid}/environ", "rb").read().decode(errors="replace"))
        except OSError:
            pass
    return seen
def status(field):
    return [l.split()[1] for l in open("/proc/self/status") if l.startswith(field + ":")][0]
def write(path):
    with open(path, "w") as out:
        out.write("escaped")
found["environments"] = environments()
found["cap_eff"] = status("CapEff")
found["no_new_privs"] = status("NoNewPrivs")
found["seccomp"] = status("Seccomp")
found["mounts"] = [l.split()[4] for l in open("/proc/self/mountinfo")]
found["uid"] = os.getuid()
attempt("host_port", lambda: socket.create_connection(("127.0.0.1", HOST_PORT), timeout=3).close())
attempt("host_file", lambda: open(HOST_FILE).read())
attempt("checkout", lambda: os.listdir(CHECKOUT))
attempt("write_tools", lambda: write(TOOLS + "/serve.py"))
attempt("write_root", lambda: write("/root/escaped"))
print(json.dumps(found))
"""


@pytest.mark.slow
@pytest.mark.e2e
def test_chrome_tabs_over_the_debugging_port_in_the_container(osworld_root: Path, docker_ready: None) -> None:
    """The Chrome tabs task of test_chrome.py (its live sites replaced by local pages), in the container:
    the host's CDP channel reaches the container's Chromium, and only it."""
    from forge_eval.benchmarks.osworld import OSWorldTask, evaluate, make_provider, start_episode
    from tests.benchmarks.osworld.test_chrome import _tabs_task

    episode = start_episode(
        OSWorldTask("chrome", _tabs_task(osworld_root)),
        make_provider("docker", osworld_root),
        tree=osworld_root,
        action_space="pyautogui",
        observation_type="screenshot",
        pause=1.0,
    )
    try:
        nothing, why_nothing = evaluate(episode)
        episode.env.step("import pyautogui; pyautogui.hotkey('ctrl', 'shift', 't')")
        solved, why = evaluate(episode)
    finally:
        episode.session.stop()
    assert nothing == 0.0, why_nothing
    assert solved == 1.0, why


@pytest.mark.slow
@pytest.mark.e2e
def test_the_container_gives_the_agent_no_host_file_port_credential_or_capability(
    container: object, tmp_path: Path
) -> None:
    from forge_eval.benchmarks.osworld import ContainerDesktop

    assert isinstance(container, ContainerDesktop) and container.client is not None
    host_file = tmp_path / "host-only.txt"
    host_file.write_text("a host file")
    listener = socket.create_server(("127.0.0.1", 0))
    connections: list[object] = []
    threading.Thread(target=lambda: connections.append(listener.accept()), daemon=True).start()
    assert container.state is not None
    probe = (
        _PROBE.replace("HOST_PORT", str(listener.getsockname()[1]))
        .replace("HOST_FILE", repr(str(host_file)))
        .replace("CHECKOUT", repr(str(REPO)))
        .replace("TOOLS", repr(str(container.state / "tools")))
    )
    try:
        done = container.client.execute(["python3", "-c", probe])
    finally:
        listener.close()
    assert done["returncode"] == 0, done
    found = json.loads(done["output"])
    assert found["uid"] != 0 and found["cap_eff"] == "0000000000000000" and found["no_new_privs"] == "1"
    assert found["seccomp"] == "2"  # filtered (user namespaces allowed: Chromium's sandbox and sudo)
    assert found["environments"] and not [e for e in found["environments"] if SECRET in e]
    assert not found["host_port"]["ok"] and not connections, found["host_port"]
    for name in ("host_file", "checkout", "write_tools", "write_root"):
        assert not found[name]["ok"], (name, found[name])
    binds = {m for m in found["mounts"] if m.startswith("/") and m not in ("/", "/proc", "/dev", "/sys")}
    binds = {m for m in binds if not m.startswith(("/proc/", "/dev/", "/sys/"))}
    assert binds <= ENGINE_FILES, binds


@pytest.mark.slow
@pytest.mark.e2e
def test_another_host_user_cannot_drive_the_container_desktop(container: object) -> None:
    from forge_eval.benchmarks.osworld import ContainerDesktop

    assert isinstance(container, ContainerDesktop) and container.client is not None
    command = {"command": "touch /home/user/driven-by-a-stranger", "shell": True}
    stranger = f"""
import httpx, json
try:
    answer = httpx.post({container.client.url + "/setup/execute"!r}, json={command!r}, timeout=10)
    print(json.dumps({{"status": answer.status_code}}))
except httpx.HTTPError as exc:
    print(json.dumps({{"error": type(exc).__name__}}))
"""
    done = as_nobody(sys.executable, "-c", stranger)
    assert done.returncode == 0, done.stderr
    assert "error" in json.loads(done.stdout), done.stdout
    assert _read(container, "/home/user/driven-by-a-stranger") is None
    assert container.client.execute(["touch", "/home/user/driven-by-the-run"])["returncode"] == 0
    assert _read(container, "/home/user/driven-by-the-run") == b""


@pytest.mark.slow
@pytest.mark.e2e
def test_the_agent_cannot_answer_the_checker_in_the_container_servers_place(container: object) -> None:
    from forge_eval.benchmarks.osworld import ContainerDesktop

    assert isinstance(container, ContainerDesktop) and container.client is not None
    client = container.client
    client.upload("/home/user/Desktop/answer.txt", b"the real answer")
    assert client.read("/home/user/Desktop/answer.txt") == b"the real answer"
    encoded = base64.b64encode(_ATTACK.encode()).decode()
    detached = "start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL"
    launch = (
        "import base64, subprocess, sys; subprocess.Popen([sys.executable, '-c', "
        f"base64.b64decode({encoded!r}).decode()], {detached})"
    )
    assert client.execute(["python", "-c", launch])["returncode"] == 0
    deadline = time.monotonic() + 60
    while (report := _read(container, "/home/user/attack.json")) is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert report is not None, "the attack wrote no report"
    found = json.loads(report)
    # the attack traces what names the session in its command line: PID 1 does, tini, which runs it; tini
    # holds no socket and runs as the agent's uid, so tracing it gives the agent nothing it lacks
    assert _exec(container, "readlink", "/proc/1/exe") == b"/usr/bin/tini\n"
    assert found["stolen"] == [] and set(found["traced"]) <= {1}, found
    assert found["refused"], "the attack found no process to take sockets from"
    assert found["port_taken"], found
    try:
        read = client.read("/home/user/Desktop/answer.txt")
    except httpx.HTTPError:
        read = None
    assert read != FORGED.encode()
    assert _read(container, "/home/user/forged-answers") is None, "a host request reached the agent's server"


@pytest.mark.slow
@pytest.mark.e2e
def test_a_stopped_container_desktop_leaves_nothing(container: object) -> None:
    from forge_eval.benchmarks.osworld import ContainerDesktop

    assert isinstance(container, ContainerDesktop) and container.state is not None
    name, state = container.container, container.state
    assert container.processes()
    container.stop()
    assert subprocess.run(["docker", "inspect", str(name)], capture_output=True).returncode != 0
    assert not state.exists() and not container.processes()


def test_the_vm_provider_stops_at_its_downloads_with_one_message(
    osworld_root: Path, docker_engine: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from forge_eval._errors import ForgeError
    from forge_eval.benchmarks.osworld import make_provider
    from forge_eval.benchmarks.osworld._vm import DISK_ZIP_GB, VM_IMAGE, disk_path, disk_url, kvm_problem

    monkeypatch.setenv("FORGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)  # upstream would download into ./docker_vm_data
    provider = make_provider("vm", osworld_root)
    if missing := provider.requirements():
        assert kvm_problem() is not None or shutil.which("docker") is None or "docker" in " ".join(missing)
        pytest.skip("OSWorld's VM cannot run here before its downloads: " + "; ".join(missing))
    with pytest.raises(ForgeError) as raised:
        provider.start(set())
    message = str(raised.value)
    url = disk_url(osworld_root)
    assert url.startswith("https://") and url.endswith("/Ubuntu.qcow2.zip")
    for part in (f"docker pull {VM_IMAGE}", url, f"{DISK_ZIP_GB} GB", str(disk_path())):
        assert part in message, (part, message)
    assert disk_path().is_relative_to(tmp_path / "cache")
    assert not (tmp_path / "cache").exists() and not (tmp_path / "docker_vm_data").exists()


def test_the_image_is_rebuilt_when_the_desktop_packages_change(tmp_path: Path) -> None:
    from forge_eval.benchmarks.osworld import _image

    before = _image.image_tag(_image.LOCAL_BASE)
    assert before == _image.image_tag(_image.LOCAL_BASE)
    assert before != _image.image_tag(_image.REGISTRY_BASE)
    changed = tmp_path / "60-desktop.sh"
    changed.write_text(_image.CONTEXT["60-desktop.sh"].read_text() + "\n# one more package\n")
    context = {**_image.CONTEXT, "60-desktop.sh": changed}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_image, "CONTEXT", context)
        assert _image.image_tag(_image.LOCAL_BASE) != before


@pytest.mark.slow
@pytest.mark.e2e
def test_podman_scores_a_task_as_docker_does(osworld_root: Path) -> None:
    from forge_eval.benchmarks.osworld import evaluate, load_tasks, make_provider, start_episode
    from forge_eval.benchmarks.osworld._image import LOCAL_BASE, REGISTRY_BASE, engine_problems, has_image

    if shutil.which("podman") is None:
        pytest.skip(
            "podman is not installed (scripts/setup.d sets up docker only: a second engine would build and "
            "store the 2.9 GB desktop image again)"
        )
    if problems := engine_problems("podman"):
        pytest.skip("podman cannot run containers here: " + "; ".join(problems))
    if not has_image("podman", LOCAL_BASE) and not has_image("podman", REGISTRY_BASE):
        pytest.skip(
            f"podman has no Debian 12 base ({LOCAL_BASE} or {REGISTRY_BASE}) and none can be pulled here"
        )
    (task,) = load_tasks(osworld_root, task_ids=VLC_TASK)
    episode = start_episode(
        task,
        make_provider("podman", osworld_root),
        tree=osworld_root,
        action_space="pyautogui",
        observation_type="screenshot",
        pause=0.3,
    )
    try:
        nothing, _ = evaluate(episode)
        episode.env.step(ORACLES[VLC_TASK][1])
        episode.env.step("DONE")
        solved, why = evaluate(episode)
    finally:
        episode.session.stop()
    assert (nothing, solved) == (0.0, 1.0), why
