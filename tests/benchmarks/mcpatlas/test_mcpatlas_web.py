"""MCP-Atlas's web-API servers: each installed one starts in its sandbox, with the run's egress gate
forwarded in, and lists the tools the tasks name (listing needs no web); its only way out refuses the host;
offline they are skipped with the reason, and online (probe forced) their tasks pass selection and the
protocol record names the servers that reached the live web."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path

import pytest
from inspect_ai.tool import ToolDef, mcp_connection, mcp_server_stdio, mcp_tools

from forge_eval.benchmarks import BENCHMARKS
from forge_eval.benchmarks._benchmark import RunUsed
from forge_eval.benchmarks.mcpatlas import (
    OFFICIAL_JUDGE,
    OFFLINE,
    SERVERS,
    AtlasServer,
    load_file,
    select_tasks,
    server_problem,
    task_file,
)
from forge_eval.benchmarks.mcpatlas._servers import EGRESS_PORT
from forge_eval.benchmarks.mcpatlas._task import open_egress
from forge_eval.benchmarks.web import BrowserConfig, EgressGate, NetworkPolicy
from forge_eval.sandbox import sandbox_user, sandboxed_command, start_sandbox
from tests.sandbox._sandboxes import http_server, needs_bwrap

TREE = "scaleapi+mcp-atlas@b290e67"
WEB = sorted(name for name, s in SERVERS.items() if s.web)
#: The servers' environment sends loopback directly (axios proxies by itself); the tests send it to the gate.
PROXY_LOOPBACK = {"NO_PROXY": "", "no_proxy": ""}
#: The tasks whose reference servers are all web-API servers (the others need data or are blocked).
WEB_TASKS = {
    "688ba1b3e95696e72dd93e8d",  # osm-mcp-server, wikipedia
    "688fb11183792b921381bd14",  # osm-mcp-server, wikipedia
    "6896416f7b30e5d8ccd7c8be",  # ddg-search, met-museum
    "68993ef3cf3e953b8ab83fdf",  # ddg-search, osm-mcp-server
}


def test_the_twelve_web_servers_have_upstreams_launchers() -> None:
    assert WEB == [
        "arxiv",
        "clinicaltrialsgov-mcp-server",
        "context7",
        "ddg-search",
        "fetch",
        "met-museum",
        "open-library",
        "osm-mcp-server",
        "pubmed",
        "weather",
        "whois",
        "wikipedia",
    ]
    assert all(SERVERS.get(name).registry in ("pypi", "npm") for name in WEB)
    assert SERVERS.get("wikipedia").requirement().endswith("@735590286fbe91f705e97eba25f8272cafba5edb")
    assert SERVERS.get("arxiv").requirement() == "arxiv-mcp-server==0.2.11"
    assert SERVERS.get("context7").requirement() == "@upstash/context7-mcp@1.0.14"


async def _tool_names(server: AtlasServer, data: Path) -> list[str]:
    with sandbox_user() as user:
        async with asyncio.timeout(240), AsyncExitStack() as stack:
            opened = await open_egress(stack, [server])
            assert opened is not None
            egress = opened[1]
            spec = server.sandbox_spec(data, user, egress)
            assert spec.forwards == {EGRESS_PORT: egress} and spec.env["HTTPS_PROXY"].endswith(":1080")
            command = await stack.enter_async_context(await sandboxed_command(spec))
            stdio = mcp_server_stdio(
                name=server.name, command=command.argv[0], args=command.argv[1:], env=command.env
            )
            source = mcp_tools(stdio)
            async with mcp_connection([source]):
                return [ToolDef(t).name for t in await source.tools()]


@needs_bwrap
@pytest.mark.slow
@pytest.mark.parametrize("name", WEB)
def test_each_installed_web_server_starts_in_its_sandbox_and_lists_its_tools(
    name: str, upstream_trees: Path, tmp_path: Path, force_online: Callable[[], None]
) -> None:
    force_online()
    server = SERVERS.get(name)
    if problem := server_problem(name, tmp_path):
        pytest.skip(f"{name}: {problem}")
    data = tmp_path / "data"
    data.mkdir()
    named = {
        tool.removeprefix(f"{name}_")
        for task in load_file(task_file(upstream_trees / TREE))
        for tool in task.enabled_tools
        if tool.startswith(f"{name}_")
    }
    tools = asyncio.run(_tool_names(server, data))
    assert tools and named <= set(tools), (named, tools)


@needs_bwrap
def test_a_web_servers_way_out_refuses_the_host(tmp_path: Path) -> None:
    """The gate a web server's proxy variables name refuses a host loopback port (HTTP CONNECT, the
    protocol its HTTP client speaks), and the port cannot be reached directly from the sandbox."""
    fetch = SERVERS.get("fetch")
    if not fetch.installed():
        pytest.skip("fetch is not installed: run scripts/setup.d/45-mcp-servers.sh")
    script = """
import os, socket, httpx
try:
    print("proxied", httpx.get("https://127.0.0.1:{port}/", timeout=10).text)
except httpx.HTTPError as e:
    print("proxy refused", type(e).__name__, e)
plain = httpx.get("http://127.0.0.1:{port}/", timeout=10)
print("plain", plain.status_code, plain.text)
s = socket.socket()
s.settimeout(2)
try:
    s.connect(("127.0.0.1", {port}))
    print("direct reached")
except OSError as e:
    print("direct", type(e).__name__)
"""

    async def run(port: int) -> tuple[str, dict[tuple[str, int], str]]:
        async with AsyncExitStack() as stack:
            opened = await open_egress(stack, [fetch])
            assert opened is not None
            gate, egress = opened
            spec = fetch.sandbox_spec(tmp_path, None, egress)
            python = str(fetch.venv() / "bin" / "python")
            argv = [python, "-c", script.format(port=port)]
            probe = dataclasses.replace(spec, argv=argv, env={**spec.env, **PROXY_LOOPBACK}, timeout_s=60)
            result = await (await start_sandbox(probe)).wait()
            return result.stdout + result.stderr, dict(gate.refusals)

    with http_server(b"host secret") as port:
        out, refusals = asyncio.run(run(port))
    assert "host secret" not in out and "direct reached" not in out, out
    assert "proxy refused" in out and "403" in out, out
    assert "plain 403" in out, out  # an absolute-URL request is checked as a CONNECT is
    assert ("127.0.0.1", port) in refusals


NODE_FETCH = """
fetch("http://127.0.0.1:{port}/").then(async r => console.log("status", r.status, await r.text()),
                                      e => console.log("failed", String(e.cause)))
"""


@needs_bwrap
def test_the_gate_sends_a_web_servers_requests_on(tmp_path: Path) -> None:
    """A site the gate's policy admits (here a host loopback port, as a benchmark's own site) is reached
    from the sandbox, which has no network of its own, only through the gate: by a PyPI server's client
    (httpx, an absolute-URL request) and by an npm server's Node (24, `NODE_USE_ENV_PROXY`: its fetch
    tunnels with CONNECT)."""
    fetch, context7 = SERVERS.get("fetch"), SERVERS.get("context7")
    if not (fetch.installed() and context7.installed()):
        pytest.skip("fetch or context7 is not installed: run scripts/setup.d/45-mcp-servers.sh")

    async def run(port: int) -> tuple[str, str]:
        config = BrowserConfig(offline=False, local_origins=(f"http://127.0.0.1:{port}",))
        gate = EgressGate(NetworkPolicy(config), 10.0)
        egress = (await gate.start()).removeprefix("socks5://")
        try:
            python = str(fetch.venv() / "bin" / "python")
            code = f"import httpx; print('got', httpx.get('http://127.0.0.1:{port}/').text)"
            spec = fetch.sandbox_spec(tmp_path, None, egress)
            spec = dataclasses.replace(spec, argv=[python, "-c", code], env={**spec.env, **PROXY_LOOPBACK})
            py = await (await start_sandbox(dataclasses.replace(spec, timeout_s=60))).wait()
            node = context7.sandbox_spec(tmp_path, None, egress)
            argv = ["node", "-e", NODE_FETCH.format(port=port)]
            node = dataclasses.replace(node, argv=argv, env={**node.env, **PROXY_LOOPBACK}, timeout_s=60)
            js = await (await start_sandbox(node)).wait()
        finally:
            await gate.close()
        return py.stdout + py.stderr, js.stdout + js.stderr

    with http_server(b"served") as port:
        py, js = asyncio.run(run(port))
    assert "got served" in py, py
    assert "status 200 served" in js, js


def test_offline_the_web_servers_tasks_are_skipped_with_the_reason(upstream_trees: Path) -> None:
    for name in WEB:
        assert server_problem(name, None) == OFFLINE
    skipped = select_tasks(upstream_trees / TREE, subset="all").skipped
    assert set(skipped) >= WEB_TASKS
    assert f"osm-mcp-server: {OFFLINE}; wikipedia: {OFFLINE}" == skipped["688ba1b3e95696e72dd93e8d"]


def test_online_the_web_servers_tasks_pass_selection(
    upstream_trees: Path, monkeypatch: pytest.MonkeyPatch, force_online: Callable[[], None]
) -> None:
    force_online()
    for name in WEB:
        assert OFFLINE not in server_problem(name, None)
    # installation is not what this decides: count every pinned package as installed
    monkeypatch.setattr(AtlasServer, "installed", lambda self: True)
    selection = select_tasks(upstream_trees / TREE, subset="all")
    runs = {str(s.id) for s in selection.samples}
    assert runs >= WEB_TASKS and "6888e207a34beb25cfedda3b" in runs
    for task_id, reason in selection.skipped.items():
        assert "live web" not in reason, (task_id, reason)
    sample = next(s for s in selection.samples if s.id == "6896416f7b30e5d8ccd7c8be")
    assert sample.metadata and {"ddg-search", "met-museum"} <= set(sample.metadata["servers"])


def _servers_element(tree: Path, task_ids: tuple[str, ...]):  # type: ignore[no-untyped-def]
    run = RunUsed(
        harness="atlas-loop",
        task_args={"data_dir": str(tree), "subset": "all"},
        judge_model=OFFICIAL_JUDGE,
        task_ids=task_ids,
        data_dir=tree,
    )
    record = BENCHMARKS.get("mcpatlas").protocol(run)
    return next(e for e in record.elements if e.name == "environment: MCP servers")


def test_the_protocol_record_names_the_servers_and_their_live_web(
    upstream_trees: Path, monkeypatch: pytest.MonkeyPatch, force_online: Callable[[], None]
) -> None:
    tree = upstream_trees / TREE
    offline = _servers_element(tree, ("6888e207a34beb25cfedda3b",))
    assert offline.ours.value == {"servers": ["calculator", "cli-mcp-server"], "live_web": []}
    assert offline.note and f"offline here: the web-API servers did not run ({OFFLINE})" in offline.note
    force_online()
    monkeypatch.setattr(AtlasServer, "installed", lambda self: True)
    online = _servers_element(tree, ("6888e207a34beb25cfedda3b", "6896416f7b30e5d8ccd7c8be"))
    assert {"ddg-search", "met-museum", "calculator"} <= set(online.ours.value["servers"])
    assert {"ddg-search", "met-museum"} <= set(online.ours.value["live_web"])
    assert "calculator" not in online.ours.value["live_web"]
    assert online.note and "reached the live web as upstream's do" in online.note
    assert not online.matches
