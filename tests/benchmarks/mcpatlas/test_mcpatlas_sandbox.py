"""MCP-Atlas's real servers run in the bubblewrap sandbox as an unprivileged user, /data their only writable
path: a scripted agent runs `id` through cli-mcp-server's `find -exec`, tries to write /root, /usr, a
host folder and the seeded original through it and through mcp-server-code-runner, and to reach a host
port. The sample's own solver (`atlas_agent`) starts the servers, as in a run."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput, get_model

from forge_eval.benchmarks.mcpatlas import SERVERS
from forge_eval.benchmarks.mcpatlas._task import DEFAULT_HARNESS, atlas_agent
from forge_eval.harnesses import HARNESSES
from tests.benchmarks.forgelab._oracle import USAGE
from tests.sandbox._sandboxes import http_server, needs_bwrap

SHELL, CODE = "cli-mcp-server", "mcp-server-code-runner"
pytestmark = [
    needs_bwrap,
    pytest.mark.skipif(
        not all(SERVERS.get(s).executable().exists() for s in (SHELL, CODE)),
        reason="MCP servers not installed: run scripts/setup.d/45-mcp-servers.sh",
    ),
]

PROBE = """
import os, socket
print("uid", os.getuid())
for path in {paths!r}:
    try:
        open(path, "w").write("x")
        print("wrote", path)
    except OSError as e:
        print("refused", path, type(e).__name__)
s = socket.socket()
s.settimeout(2)
try:
    s.connect(("127.0.0.1", {port}))
    print("port reached")
except OSError as e:
    print("port", type(e).__name__)
"""


def _scripted(*outputs: ModelOutput) -> list[ModelOutput]:
    for output in outputs:
        output.usage = USAGE  # mockllm would count tokens with tiktoken, which downloads a file
    return list(outputs)


def _call(tool: str, **arguments: str) -> ModelOutput:
    return ModelOutput.for_tool_call("mockllm/model", tool, arguments)


def test_servers_run_unprivileged_with_only_data_writable(upstream_trees: Path, tmp_path: Path) -> None:
    seeded = tmp_path / "seeded"
    seeded.mkdir()
    (seeded / "notes.txt").write_text("seeded\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    token = uuid.uuid4().hex[:8]
    escapes = [Path(f"/root/forge-mcp-{token}"), Path(f"/usr/forge-mcp-{token}"), outside / token]
    escapes.append(seeded / f"pwned-{token}")
    touch = " ".join(str(p) for p in [*escapes, f"inside-cli-{token}"])
    try:
        with http_server(b"host") as port:
            code = PROBE.format(paths=[*map(str, escapes), f"/data/inside-code-{token}"], port=port)
            agent = get_model(
                "mockllm/model",
                custom_outputs=_scripted(
                    _call(f"{SHELL}_run_command", command="find . -maxdepth 0 -exec sh -c id {} +"),
                    _call(
                        f"{SHELL}_run_command",
                        command=f'find . -maxdepth 0 -exec sh -c "touch {touch}" {{}} +',
                    ),
                    _call(f"{CODE}_run-code", code=code, languageId="python"),
                    _call(f"{SHELL}_run_command", command="ls"),
                    ModelOutput.from_content("mockllm/model", "done"),
                ),
            )
            sample = Sample(
                id="probe",
                input="probe the sandbox",
                metadata={
                    "servers": [SHELL, CODE],
                    "enabled_tools": [f"{SHELL}_run_command", f"{CODE}_run-code"],
                    "left_out_tools": [],
                    "seeded_data": str(seeded),
                    "upstream_tree": str(upstream_trees / "scaleapi+mcp-atlas@b290e67"),
                },
            )
            task = Task(dataset=MemoryDataset([sample]), solver=atlas_agent(HARNESSES.get(DEFAULT_HARNESS)))
            [log] = inspect_eval(task, model=agent, log_dir=str(tmp_path / "logs"), display="none")
        assert log.status == "success", log.error
        results = [m.text for m in (log.samples or [])[0].messages if m.role == "tool"]
        assert len(results) == 4, results
        identity, _, probe, listing = results
        assert "uid=" in identity and "uid=0(" not in identity and "(forge)" in identity
        lines = probe.splitlines()
        assert lines[0].startswith("uid ") and lines[0] != "uid 0"
        assert all(f"refused {p} " in probe for p in escapes), probe
        assert f"wrote /data/inside-code-{token}" in lines
        assert "port ConnectionRefusedError" in lines  # no host port: the servers have no network
        assert not any(p.exists() for p in escapes)  # nothing outside the sample's copy was written
        assert {f"inside-cli-{token}", f"inside-code-{token}", "notes.txt"} <= set(listing.split())
        assert sorted(p.name for p in seeded.iterdir()) == ["notes.txt"]  # the original stays as it was
    finally:
        for path in escapes:
            path.unlink(missing_ok=True)


def test_without_the_sandbox_tools_a_server_cannot_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No bubblewrap here: the server is reported as unable to run (its tasks are skipped with the reason),
    never started on the host."""
    monkeypatch.setenv("PATH", str(tmp_path))
    problem = SERVERS.get(SHELL).problem(tmp_path)
    assert problem is not None and "needs bwrap and setpriv" in problem and "35-sandbox.sh" in problem
