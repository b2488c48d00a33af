"""MCP-Atlas's servers: the 20 key-free defaults, the paper's 89-task rule, and which ones run here.

The 89-task subset (v1 `mcp_completion_script.py`, on unless `--no-filter`): a task is kept iff every
server its reference TRAJECTORY calls is one of the 20 defaults, after two renames.

The servers are launched as upstream's image does (`mcp_server_template.json`): the same pinned package
from PyPI or npm (or the git URL upstream installs from), the same arguments and environment, and the
image's `/data` folder at `/data`, here a per-sample copy of the seeded files (`services/agent-environment/
data` of the upstream repository). Upstream runs them inside its agent-environment container; here each
runs in the bubblewrap sandbox (`sandbox_spec`) as the sample's unprivileged user, with that copy as its
only writable host path, nothing else of the host in view but the package and its interpreter, and no
network. The servers that call live web APIs (`web`) run only online (the web benchmarks' probe), and
reach the web only through the run's egress gate (public addresses, as the web benchmarks' browser):
a forward on the sandbox's loopback port `EGRESS_PORT`, named by the proxy variables of their
environment. Every server that cannot run here says why (`problem`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Literal

from forge_eval._errors import ForgeError
from forge_eval._registry import Registry
from forge_eval.benchmarks._selection import SkipRules
from forge_eval.benchmarks.mcpatlas._data import AtlasTask, server_of
from forge_eval.benchmarks.web import live_web_available
from forge_eval.harnesses import NODE24, NpmPackage, ensure_installed, node24_bin, npm_prefix
from forge_eval.sandbox import SandboxSpec, SandboxUser

#: The seeded data folder of upstream's image in arguments/environment, `/data` in the sandbox.
DATA = "{data}"
#: Where upstream's image (and the sandbox) holds the seeded data.
IMAGE_DATA = Path("/data")
_REPO = Path(__file__).resolve().parents[2]
_INSTALL = "python -m forge_eval.benchmarks.mcpatlas install"
#: The pinned servers import mcp 1.x APIs (mcp 2 renamed FastMCP and dropped `Server.list_tools`); upstream's
#: image resolved them before mcp 2 existed.
_MCP_V1 = "mcp>=1.10,<2"
#: Why a web server does not run on a machine the web benchmarks' probe finds offline.
OFFLINE = "needs the live web (offline here)"
#: The sandbox's loopback port forwarded to the run's egress gate (its proxy variables name it).
EGRESS_PORT = 1080


@dataclass(frozen=True)
class AtlasServer:
    """How upstream's image launches one MCP server, and what it needs here.

    Attributes:
        name: Server name, the prefix of its tool names (`<name>_<tool>`).
        registry: Where its pinned package comes from.
        package: The package name, `version` its pin (as upstream's template).
        command: The executable the package installs.
        args: Arguments; `{data}` is the sample's copy of the seeded data.
        env: Environment, same substitution.
        needs: Paths under the seeded data the server reads (missing -> it cannot run).
        blocker: Why it cannot run here at all (package not published), else None.
        source: The git URL upstream installs it from instead of the registry (only an online machine
            reaches it: this one reaches package registries alone).
        module: For a PyPI server run as `python -m module`: the module (installed when it is there).
        web: It calls live web APIs: runs only online, through the egress gate, in a venv of its own
            (as `uvx` gives each tool one: their pins conflict).
        constraints: Pins of its dependencies where today's resolution breaks the pinned server (upstream's
            image resolved them in 2025), given to pip with it.
        python: The Python its pin requires, when newer than forge-eval's (`uvx` fetches one upstream):
            its venv is made with `python<version>` from PATH.
    """

    name: str
    registry: Literal["pypi", "npm", "none"]
    package: str = ""
    version: str = ""
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    needs: tuple[str, ...] = ()
    blocker: str | None = None
    source: str = ""
    module: str = ""
    web: bool = False
    constraints: tuple[str, ...] = ()
    python: str = ""

    def venv(self) -> Path:
        """The PyPI server's venv: its own for a web server, else the servers' shared one."""
        shared = python_servers_venv()
        return shared.with_name(f"{shared.name}-{self.name}") if self.web else shared

    def executable(self) -> Path:
        if self.registry == "npm":
            return NpmPackage(self.package, self.version, self.command).executable(npm_prefix())
        return self.venv() / "bin" / self.command

    def installed(self) -> bool:
        if not self.executable().exists():
            return False
        if self.web and self.registry == "npm" and NODE24.installed_version(npm_prefix()) != NODE24.version:
            return False
        return not self.module or any(self.venv().glob(f"lib/python*/site-packages/{self.module}"))

    def requirement(self) -> str:
        """What pip or npm installs: the registry pin, or upstream's git URL."""
        if self.source:
            return f"{self.package} @ {self.source}" if self.registry == "pypi" else self.source
        return f"{self.package}{'==' if self.registry == 'pypi' else '@'}{self.version}"

    def problem(self, data: Path | None) -> str | None:
        """Why this server cannot run with this seeded data folder, or None."""
        if self.blocker:
            return self.blocker
        if self.web and not online():
            return OFFLINE
        if self.needs and data is None:
            return (
                "reads the files seeded into the mcp-atlas image (services/agent-environment/data of the "
                "upstream repository), which this data dir lacks: point --data-dir at the upstream "
                "repository root"
            )
        missing = [n for n in self.needs if data is not None and not (data / n).exists()]
        if missing:
            return f"needs {', '.join(missing)} in the seeded data {data} (absent)"
        if not self.installed() and self.source:
            return (
                f"installed from upstream's git URL {self.source}, which only an online machine can fetch "
                f"(run `{_INSTALL} {self.name}` there)"
            )
        if not self.installed() and self.python and not shutil.which(f"python{self.python}"):
            return f"its pin {self.requirement()} needs Python {self.python} (no python{self.python} on PATH)"
        if not self.installed():
            return f"{self.registry} package {self.requirement()} is not installed (run `{_INSTALL}`)"
        if missing := [tool for tool in ("bwrap", "setpriv") if shutil.which(tool) is None]:
            return (
                f"its sandbox needs {' and '.join(missing)} (run `bash scripts/setup.d/35-sandbox.sh` as "
                "root: bubblewrap, util-linux)"
            )
        return None

    def launch(self, data: Path) -> tuple[str, list[str], dict[str, str]]:
        """Command, arguments and environment for a server that sees the seeded data at `data`."""
        args = [a.replace(DATA, str(data)) for a in self.args]
        env = {k: v.replace(DATA, str(data)) for k, v in self.env.items()}
        return str(self.executable()), args, env

    def ro_binds(self) -> list[Path]:
        """What the server reads besides the data: its package folder, and the PyPI servers' venv with its
        interpreter, first on PATH as upstream's image has its uv venv (mcp-server-code-runner runs
        `python -u`). Node is Debian's, under /usr."""
        venv = self.venv()
        binds = [npm_prefix()] if self.registry == "npm" else []
        if (venv / "bin" / "python").exists():
            binds += [venv, Path(os.path.realpath(venv / "bin" / "python")).parents[1]]
        return binds

    def sandbox_spec(self, data: Path, user: SandboxUser | None, egress: str | None = None) -> SandboxSpec:
        """The server in the sandbox, as upstream's image runs it: the sample's data copy `data` at
        /data (its only writable host path, also its cwd), run as `user` (one per sample: every server
        of the sample writes the same copy). A web server's only way out is `egress` (the gate's
        host:port), forwarded to the sandbox's `EGRESS_PORT` and named by the proxy variables that
        Python's and Node's HTTP clients read; without it the server has no network."""
        command, args, env = self.launch(IMAGE_DATA)
        web = egress is not None and self.web
        node = [str(node24_bin(npm_prefix()))] if web and self.registry == "npm" else []
        path = ":".join([*node, str(self.venv() / "bin"), "/usr/local/bin", "/usr/bin", "/bin"])
        return SandboxSpec(
            argv=[command, *args],
            workdir=data,
            workdir_at=IMAGE_DATA,
            env={"PATH": path, **env, **(proxy_variables() if web else {})},
            forwards={EGRESS_PORT: egress} if web and egress else {},
            ro_binds=self.ro_binds(),
            hostname="mcp-atlas",
            user=user,
        )


def proxy_variables() -> dict[str, str]:
    """The environment that sends a web server's HTTP(S) through the forwarded gate (an HTTP proxy).
    Node 20's fetch ignores proxy variables, so the npm web servers run on the harnesses' Node 24 with
    `NODE_USE_ENV_PROXY`; loopback is not proxied, so that a client doing its own proxying (axios)
    reaches the gate itself."""
    proxy = f"http://127.0.0.1:{EGRESS_PORT}"
    names = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
    variables = {**{n: proxy for n in names}, **{n.lower(): proxy for n in names}}
    direct = "127.0.0.1,localhost"
    return {**variables, "NO_PROXY": direct, "no_proxy": direct, "NODE_USE_ENV_PROXY": "1"}


@cache
def online() -> bool:
    """Whether the live web answers here: the web benchmarks' probe, run once per process."""
    return live_web_available()


def python_servers_venv() -> Path:
    """The venv of the PyPI servers: `$FORGE_MCP_VENV`, else `<checkout>/.forge-cache/mcp-venv`."""
    return Path(os.environ.get("FORGE_MCP_VENV") or _REPO / ".forge-cache" / "mcp-venv").resolve()


#: The 20 key-free default servers: how each is launched, or why it cannot run here.
SERVERS: Registry[AtlasServer] = Registry("MCP-Atlas server")


def _add(server: AtlasServer) -> None:
    SERVERS.register(server.name, server)


_add(AtlasServer("calculator", "pypi", "mcp-server-calculator", "0.2.0", "mcp-server-calculator"))
_add(
    AtlasServer(
        "cli-mcp-server",
        "pypi",
        "cli-mcp-server",
        "0.2.5",
        "cli-mcp-server",
        env={
            "ALLOWED_DIR": DATA,
            "ALLOWED_COMMANDS": "ls,cat,find",
            "ALLOWED_FLAGS": "ALL",
            "MAX_COMMAND_LENGTH": "1024",
            "COMMAND_TIMEOUT": "30",
            "ALLOW_SHELL_OPERATORS": "false",
        },
        needs=(".",),
    )
)
_add(
    AtlasServer(
        "filesystem",
        "npm",
        "@modelcontextprotocol/server-filesystem",
        "2025.11.25",
        "mcp-server-filesystem",
        args=(DATA,),
        needs=(".",),
    )
)
_add(
    AtlasServer(
        "memory",
        "npm",
        "@modelcontextprotocol/server-memory",
        "2025.8.4",
        "mcp-server-memory",
        env={"MEMORY_FILE_PATH": f"{DATA}/repos/memory_mcp_server/memories-for-mcp.json"},
        needs=("repos/memory_mcp_server/memories-for-mcp.json",),
    )
)
_add(
    AtlasServer("mcp-server-code-runner", "npm", "mcp-server-code-runner", "0.1.7", "mcp-server-code-runner")
)
_add(
    AtlasServer(
        "git",
        "pypi",
        "mcp-server-git",
        "2025.7.1",
        "mcp-server-git",
        # upstream's image clones these at build time from GitHub (repos/git_submodule_info.csv)
        needs=tuple(
            f"repos/{r}"
            for r in (
                "balldontlie-mcp",
                "mcp-server-calculator",
                "metmuseum-mcp",
                "mongodb-mcp-server",
                "slackr",
                "snake-game",
                "storyteller",
                "tree-sitter-diff",
            )
        ),
    )
)
_add(
    AtlasServer(
        "mcp-code-executor",
        "none",
        blocker="its pinned npm package @geobio/code_execution_server@0.2.1 is not on the npm registry (404)",
    )
)
_add(
    AtlasServer(
        "desktop-commander",
        "none",
        blocker="its pin @wonderwhy-er/desktop-commander@0.2.7 is not on the npm registry (404: no such "
        "version)",
    )
)
for _web in (
    AtlasServer(
        "arxiv",
        "pypi",
        "arxiv-mcp-server",
        "0.2.11",
        "arxiv-mcp-server",
        web=True,
        # pymupdf4llm 2.0 is an empty placeholder (its code moved into pymupdf 2): the server fails to import
        constraints=("pymupdf4llm<2",),
    ),
    AtlasServer("ddg-search", "pypi", "duckduckgo-mcp-server", "0.1.1", "duckduckgo-mcp-server", web=True),
    AtlasServer("fetch", "pypi", "mcp-server-fetch", "2025.4.7", "mcp-server-fetch", web=True),
    AtlasServer(
        "osm-mcp-server", "pypi", "osm-mcp-server", "0.1.1", "osm-mcp-server", web=True, python="3.13"
    ),
    AtlasServer(
        "pubmed",
        "pypi",
        "pubmed-mcp-server",
        command="python",
        args=("-m", "pubmed_server"),
        source="git+https://github.com/geobio/PubMed-MCP-Server.git",
        module="pubmed_server",
        web=True,
    ),
    AtlasServer(
        "wikipedia",
        "pypi",
        "wikipedia-mcp",
        command="wikipedia-mcp",
        source="git+https://github.com/Rudra-ravi/wikipedia-mcp.git@735590286fbe91f705e97eba25f8272cafba5edb",
        web=True,
    ),
    AtlasServer(
        "clinicaltrialsgov-mcp-server",
        "npm",
        "clinicaltrialsgov-mcp-server",
        "1.0.8",
        "clinicaltrialsgov-mcp-server",
        env={"MCP_LOG_LEVEL": "info"},
        web=True,
    ),
    AtlasServer("context7", "npm", "@upstash/context7-mcp", "1.0.14", "context7-mcp", web=True),
    AtlasServer("met-museum", "npm", "metmuseum-mcp", "0.9.2", "metmuseum-mcp", web=True),
    AtlasServer("open-library", "npm", "@geobio/mcp-open-library", "0.1.6", "mcp-open-library", web=True),
    AtlasServer("whois", "npm", "@bharathvaj/whois-mcp", "1.0.1", "whois-mcp", web=True),
    AtlasServer(
        "weather",
        "npm",
        "@smithery/weather",
        command="weather",
        source="https://github.com/geobio/smitheryai-mcp-servers-weather",
        web=True,
    ),
):
    _add(_web)


#: The 20 key-free servers of upstream's default set (all registered above).
DEFAULT_SERVERS = frozenset(SERVERS.names())


def server_problem(name: str, data: Path | None) -> str:
    """Why server `name` cannot run here ('' if it can); non-default servers need keys."""
    if name not in DEFAULT_SERVERS:
        return "key-gated (needs an API key and, for some, data seeded into a cloud account)"
    return SERVERS.get(name).problem(data) or ""


def trajectory_servers(task: AtlasTask) -> frozenset[str]:
    """Servers of the reference calls, with upstream's renames (brave, MongoDB)."""
    renamed = []
    for name in task.trajectory_tools:
        if name.startswith("brave_brave_web_search"):
            name = "brave-search_brave_web_search"
        elif name.startswith("MongoDB_"):
            name = "mongodb_" + name[len("MongoDB_") :]
        renamed.append(server_of(name))
    return frozenset(renamed)


def paper_subset(tasks: Iterable[AtlasTask]) -> list[AtlasTask]:
    """The tasks the rule keeps (89 of the 500 public tasks in the paper)."""
    return [t for t in tasks if trajectory_servers(t) <= DEFAULT_SERVERS]


#: Why an MCP-Atlas task cannot run here (context: the seeded data folder, if any).
SKIP_RULES: SkipRules[AtlasTask, Path | None] = SkipRules("MCP-Atlas")


@SKIP_RULES.rule("servers")
def _servers(task: AtlasTask, data: Path | None) -> str | None:
    """Each server of the task's reference calls that cannot run here, with its reason."""
    problems = [f"{s}: {p}" for s in sorted(trajectory_servers(task)) if (p := server_problem(s, data))]
    return "; ".join(problems) or None


def skip_reason(task: AtlasTask, data: Path | None) -> str | None:
    """Why the task cannot run here (`SKIP_RULES`), or None."""
    return SKIP_RULES.reason(task, data)


def runnable_servers(task: AtlasTask, data: Path | None) -> list[AtlasServer]:
    """The task's enabled servers that run here (distractors of the others are left out)."""
    return [SERVERS.get(s) for s in sorted(task.enabled_servers) if not server_problem(s, data)]


def installable() -> list[AtlasServer]:
    return [s for _, s in SERVERS.items() if s.registry != "none"]


def install(names: Iterable[str] | None = None) -> None:
    """Install the pinned packages of these servers (default: all that have one); idempotent. A git
    source (pubmed, weather, wikipedia) installs only where its host is reachable."""
    chosen = [SERVERS.get(n) for n in names] if names else installable()
    if bad := [s.name for s in chosen if s.registry == "none"]:
        raise ForgeError(f"cannot install {', '.join(bad)}: {SERVERS.get(bad[0]).blocker}")
    todo = [s for s in chosen if not s.installed()]
    npm = [NpmPackage(s.package, s.version, s.command) for s in todo if s.registry == "npm" and not s.source]
    if any(s.web and s.registry == "npm" for s in chosen):
        npm.insert(0, NODE24)  # the npm web servers' Node (`proxy_variables`)
    if npm:
        ensure_installed(npm)
    for server in (s for s in todo if s.registry == "npm" and s.source):
        _npm_install(server.source)
    venvs: dict[Path, list[str]] = {}
    pythons = {}
    for server in (s for s in todo if s.registry == "pypi"):
        venvs.setdefault(server.venv(), []).extend([server.requirement(), *server.constraints])
        pythons[server.venv()] = _interpreter(server)
    for venv, requirements in venvs.items():
        if not (venv / "bin" / "python").exists():
            subprocess.run([pythons[venv], "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
            + [*requirements, _MCP_V1],
            check=True,
        )


def _interpreter(server: AtlasServer) -> str:
    """The Python that makes the server's venv: forge-eval's own, or the newer one its pin requires."""
    if not server.python:
        return sys.executable
    found = shutil.which(f"python{server.python}")
    if found is None:
        raise ForgeError(
            f"{server.name}: {server.requirement()} requires Python {server.python}, and no "
            f"python{server.python} is on PATH",
            hint=f"install Python {server.python} (upstream's uvx fetches one) and put it on PATH",
        )
    return found


def _npm_install(source: str) -> None:
    """An npm package from upstream's git URL into the harness npm cache (`npx -y URL` in upstream)."""
    npm = shutil.which("npm")
    if npm is None:
        raise ForgeError(f"npm is needed to install {source}", hint="apt-get install nodejs npm")
    prefix = npm_prefix()
    argv = [npm, "install", "--prefix", str(prefix), "--no-fund", "--no-audit", "--loglevel=error", source]
    subprocess.run(argv, check=True)
