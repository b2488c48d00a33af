"""A hostile agent in a real Chromium: no host file, no host port but the benchmark's, however it asks.

Each refused way out is an error observation on its step; the episode goes on and still reaches its
allowed pages. `host_port` is a real server on another 127.0.0.1 port: it must never see a request.
"""

from __future__ import annotations

import inspect
import ipaddress
import socket
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import ModelOutput, get_model

from forge_eval.benchmarks.web import BrowserConfig, Observation, WebEnv
from forge_eval.benchmarks.web._policy import NetworkPolicy, Refused
from forge_eval.benchmarks.weblab import WebTask, weblab
from tests.benchmarks.web._scripted import ScriptedAgent, action
from tests.benchmarks.web.conftest import HOSTILE_TARGETS, SECRET, HostPort, LoopRunner

ALLOWED = "www.allowed.test"
PASSWD = "root:x:0:0"


def _clean(obs: Observation) -> bool:
    """Whether an observation shows nothing of the host (file or other port)."""
    seen = f"{obs.url} {obs.title} {obs.aria} {obs.tabs}"
    return SECRET not in seen and PASSWD not in seen


def _hostile(base: str, to: str) -> str:
    return f"{base}/hostile?to={quote(to, safe='')}"


def test_policy_decisions() -> None:
    """The policy alone: where each URL is served from, and which connections the egress gate admits."""
    offline = NetworkPolicy(BrowserConfig(host_map={ALLOWED: "http://127.0.0.1:8001/"}))
    assert offline.route(f"https://{ALLOWED}/a/b?c=1#f") == "http://127.0.0.1:8001/a/b?c=1"
    assert offline.route(f"HTTPS://{ALLOWED.upper()}./") == "http://127.0.0.1:8001/"
    assert offline.route("http://127.0.0.1:8001/x") == "http://127.0.0.1:8001/x"  # the site's own port
    for url in ("http://127.0.0.1:8002/", "https://www.example.com/", "http://user@[::ffff:7f00:1]:8001/"):
        with pytest.raises(Refused):
            offline.route(url)
    online = NetworkPolicy(BrowserConfig(offline=False, local_origins=("http://localhost:8001",)))
    assert online.route("https://www.example.com/") is None  # Chromium loads it, through the gate
    assert online.route("http://localhost:8001/") is None
    for url in (
        "http://10.1.2.3/",
        "http://169.254.169.254/latest/",
        "http://[fe80::1]/",
        "http://a.localhost/",
    ):
        with pytest.raises(Refused, match="is a (private|link-local|loopback) address"):
            online.route(url)
    public, private = ipaddress.ip_address("93.184.215.14"), ipaddress.ip_address("10.0.0.7")
    online.check_connection("www.example.com", 443, [public])
    online.check_connection("localhost", 8001, [ipaddress.ip_address("127.0.0.1")])  # its own port
    with pytest.raises(Refused, match="resolves to 10.0.0.7, which is a private address"):
        online.check_connection("mixed.example", 443, [public, private])
    with pytest.raises(Refused, match="resolves to ::ffff:7f00:1, which is a loopback address"):
        online.check_connection("mapped.example", 80, [ipaddress.ip_address("::ffff:127.0.0.1")])
    with pytest.raises(Refused, match="not one of the allowed hosts"):
        NetworkPolicy(BrowserConfig(offline=False, allowed_hosts=("a.example",))).route("https://b.example/")


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("file:///etc/passwd", "'file:' URLs are not loaded"),
        ("FILE:///etc/passwd", "'file:' URLs are not loaded"),
        ("chrome://version", "'chrome:' URLs are not loaded"),
        ("data:text/html,<title>x</title>", "'data:' URLs are not loaded"),
        ("javascript:location='file:///etc/passwd'", "'javascript:' URLs are not loaded"),
        ("view-source:file:///etc/passwd", "'view-source:' URLs are not loaded"),
        ("about:blank", "'about:' URLs are not loaded"),
        ("/etc/passwd", "URLs without http:// or https://"),
    ],
)
def test_goto_loads_only_http_urls(url: str, reason: str, test_site: str, run: LoopRunner) -> None:
    async def main() -> None:
        async with WebEnv(BrowserConfig(host_map={ALLOWED: test_site})) as env:
            await env.start(f"https://{ALLOWED}/second")
            obs = await env.step({"name": "goto", "url": url})
            assert reason in (env.trajectory.steps[-1].error or ""), env.trajectory.steps[-1].error
            assert _clean(obs) and obs.title == "Second"  # the agent is still on its page
            obs = await env.step({"name": "browser_nav", "nav_type": "new_tab", "url": url})
            assert reason in (env.trajectory.steps[-1].error or "") and _clean(obs) and len(obs.tabs) == 1
            obs = await env.step({"name": "goto", "url": f"https://{ALLOWED}/"})
            assert env.trajectory.steps[-1].error is None and obs.title == "Action test page"

    run(main())


def test_goto_reaches_no_host_port_but_the_benchmarks(
    test_site: str, host_port: HostPort, run: LoopRunner
) -> None:
    port = host_port.url.rsplit(":", 1)[1]
    names = ["127.0.0.1", "localhost", "[::1]", "0.0.0.0", "2130706433", "127.1", "0x7f.0.0.1", "localhost."]

    async def main() -> None:
        config = BrowserConfig(host_map={ALLOWED: test_site})
        async with WebEnv(config) as env:
            await env.start(f"https://{ALLOWED}/second")
            for name in names:
                obs = await env.step({"name": "goto", "url": f"http://{name}:{port}/"})
                error = env.trajectory.steps[-1].error or ""
                assert (
                    f"cannot load http://{name}:{port}/" in error and "not one of this benchmark's" in error
                )
                assert _clean(obs)
            # The benchmark's own sites still load, and the agent can still answer.
            obs = await env.step({"name": "goto", "url": f"https://{ALLOWED}/second"})
            assert obs.title == "Second" and env.trajectory.steps[-1].error is None
            await env.step({"name": "send_msg_to_user", "msg": "[ANSWER] done"})
            assert env.trajectory.answer == "[ANSWER] done"
        assert host_port.hits == []

    run(main())


@pytest.mark.parametrize("target", ["host port", "file"])
def test_pages_of_an_allowed_site_cannot_lead_off_it(
    target: str, test_site: str, host_port: HostPort, run: LoopRunner
) -> None:
    """Links, popups, script navigations, form posts, iframes and redirects of an allowed site's page."""
    to = f"{host_port.url}/secret" if target == "host port" else "file:///etc/passwd"
    base = f"https://{ALLOWED}"

    async def main() -> None:
        async with WebEnv(BrowserConfig(host_map={ALLOWED: test_site}), elements=True) as env:
            await env.start(f"{base}/second")
            for way, (x, y) in HOSTILE_TARGETS.items():
                obs = await env.step({"name": "goto", "url": _hostile(base, to)})
                assert obs.title == "Hostile" and _clean(obs)
                assert f"refused {to}: " in (env.trajectory.steps[-1].error or ""), way  # the iframe
                obs = await env.step({"name": "mouse_click", "x": x, "y": y})
                if len(obs.tabs) > 1:  # the popup: observe it, then close it
                    obs = await env.step({"name": "noop"})
                    assert _clean(obs)
                    await env.step({"name": "browser_nav", "nav_type": "close_tab"})
                assert _clean(obs), way
                error = "\n".join(s.error or "" for s in env.trajectory.steps[-3:])
                assert f"refused {to}: " in error, (way, error)
            for status in (302, 303, 307):
                redirect = f"{base}/redirect?status={status}&to={quote(to, safe='')}"
                obs = await env.step({"name": "goto", "url": redirect})
                error = env.trajectory.steps[-1].error or ""
                assert (
                    f"cannot load {redirect}: refused {redirect} redirected to {to}, which was refused"
                    in error
                )
                assert _clean(obs)
            obs = await env.step({"name": "goto", "url": f"{base}/second"})
            assert obs.title == "Second" and env.trajectory.steps[-1].error is None
        assert host_port.hits == []

    run(main())


def test_live_web_connections_pass_the_egress_gate(
    test_site: str, host_port: HostPort, run: LoopRunner
) -> None:
    """Online, Chromium follows redirects and resolves names itself: the egress gate refuses a redirect to
    another host port and a DNS name that resolves to this machine, and lets the benchmark's own port in."""
    port = int(host_port.url.rsplit(":", 1)[1])
    here = socket.gethostname().lower()
    if here == "localhost" or here.endswith(".localhost"):
        pytest.skip("this machine's name is a localhost name (refused by name, before DNS)")
    try:
        infos = socket.getaddrinfo(here, port, type=socket.SOCK_STREAM)
    except socket.gaierror:
        pytest.skip(f"this machine's name {here} does not resolve")
    if any(ipaddress.ip_address(i[4][0].split("%")[0]).is_global for i in infos):
        pytest.skip(f"this machine's name {here} resolves to a public address")
    redirects = {
        f"{host_port.url}/a": f"127.0.0.1:{port} is a loopback address",
        f"http://{here}:{port}/b": f"{here} resolves to",
        f"http://localhost:{port}/c": "localhost:",
    }

    async def main() -> None:
        async with WebEnv(BrowserConfig(offline=False, local_origins=(test_site,))) as env:
            obs = await env.start(test_site + "/second")  # through the gate: the benchmark's own port
            assert obs.title == "Second"
            for to, reason in redirects.items():
                redirect = f"{test_site}/redirect?to={quote(to, safe='')}"
                obs = await env.step({"name": "goto", "url": redirect})
                error = env.trajectory.steps[-1].error or ""
                assert f"cannot load {redirect}: refused {to}: " in error and reason in error, error
                assert _clean(obs)
            obs = await env.step({"name": "goto", "url": _hostile(test_site, f"http://{here}:{port}/d")})
            assert f"{here} resolves to" in (env.trajectory.steps[-1].error or "") and _clean(obs)
            obs = await env.step({"name": "goto", "url": host_port.url + "/e"})
            assert "is a loopback address that is not one of this benchmark's" in (
                env.trajectory.steps[-1].error or ""
            )
            obs = await env.step({"name": "goto", "url": test_site + "/second"})
            assert obs.title == "Second" and env.trajectory.steps[-1].error is None
        assert host_port.hits == []

    run(main())


def _hostile_agent(host_port: str) -> Callable[[str, int], ModelOutput]:
    """Tries the host's files, the benchmark's own answer file and another host port, then does the task."""
    answers = Path(inspect.getfile(WebTask))  # the tasks with their expected answers
    plan = [
        {"name": "goto", "url": "file:///etc/passwd"},
        {"name": "goto", "url": answers.as_uri()},
        {"name": "browser_nav", "nav_type": "new_tab", "url": f"{host_port}/"},
        {"name": "goto", "url": "https://dictionary.lexicon.test/define/procrastinate"},
        {"name": "send_msg_to_user", "msg": "[ANSWER] verb"},
    ]

    def act(prompt: str, step: int) -> ModelOutput:
        return action(f"step {step}", **plan[step])

    return act


def test_a_hostile_agent_leaves_the_score_and_the_log_clean(tmp_path: Path, host_port: HostPort) -> None:
    """Through Inspect and the molmoweb harness: each refused step is an error the model reads in its
    history, the sample ends normally, and its score is what the answer earns."""
    agent = get_model(
        "mockllm/model", custom_outputs=ScriptedAgent({"procrastinate": _hostile_agent(host_port.url)})
    )
    (log,) = inspect_eval(
        weblab(task_ids="dict-pos", observation="text"), model=agent, log_dir=str(tmp_path), display="none"
    )
    assert log.status == "success", log.error
    log = read_eval_log(log.location, resolve_attachments=True)  # everything the log holds, in full
    (sample,) = log.samples or []
    assert sample.error is None and sample.scores["weblab_verifier"].value == 1.0
    history = [e for e in sample.events if e.event == "model"][-1].input[-1].text.split("Previous steps:")[1]
    assert history.count("(error: cannot load file://") == 2 and "'file:' URLs are not loaded" in history
    assert f"(error: cannot load {host_port.url}/: 127.0.0.1:" in history
    dump = log.model_dump_json()
    answers = Path(inspect.getfile(WebTask)).read_text().splitlines()[0].strip('"')
    assert PASSWD not in dump and SECRET not in dump and answers not in dump
    assert host_port.hits == []
