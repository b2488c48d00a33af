"""MCP-Atlas's servers: the 20 key-free defaults, the paper's 89-task rule, and which ones run here.

The 89-task subset (v1 `mcp_completion_script.py`, on unless `--no-filter`): a task is kept iff every
server its reference TRAJECTORY calls is one of the 20 defaults, after two renames.

The servers that can run offline are launched as upstream's image does (`mcp_server_template.json`):
the same pinned package from PyPI or npm, the same arguments and environment, and the image's `/data`
folder at `/data`, here a per-sample copy of the seeded files (`services/agent-environment/data` of the
upstream repository). Upstream runs them inside its agent-environment container; here each runs in the
bubblewrap sandbox (`sandbox_spec`) as the sample's unprivileged user, with that copy as its only
writable host path, nothing else of the host in view but the package and its interpreter, and no
network. Every other server has a `blocker`: why it cannot run on an offline machine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from forge_eval._errors import ForgeError
from forge_eval._registry import Registry
from forge_eval.benchmarks._selection import SkipRules
from forge_eval.benchmarks.mcpatlas._data import AtlasTask, server_of
from forge_eval.harnesses import NpmPackage, ensure_installed, npm_prefix
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
        blocker: Why it cannot run here at all (live web API, package not published), else None.
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

    def executable(self) -> Path:
        if self.registry == "npm":
            return NpmPackage(self.package, self.version, self.command).executable(npm_prefix())
        return python_servers_venv() / "bin" / self.command

    def problem(self, data: Path | None) -> str | None:
        """Why this server cannot run with this seeded data folder, or None."""
        if self.blocker:
            return self.blocker
        if self.needs and data is None:
            return (
                "reads the files seeded into the mcp-atlas image (services/agent-environment/data of the "
                "upstream repository), which this data dir lacks: point --data-dir at the upstream "
                "repository root"
            )
        missing = [n for n in self.needs if data is not None and not (data / n).exists()]
        if missing:
            return f"needs {', '.join(missing)} in the seeded data {data} (absent)"
        if not self.executable().exists():
            pin = f"{self.package}{'==' if self.registry == 'pypi' else '@'}{self.version}"
            return f"{self.registry} package {pin} is not installed (run `{_INSTALL}`)"
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
        venv = python_servers_venv()
        binds = [npm_prefix()] if self.registry == "npm" else []
        if (venv / "bin" / "python").exists():
            binds += [venv, Path(os.path.realpath(venv / "bin" / "python")).parents[1]]
        return binds

    def sandbox_spec(self, data: Path, user: SandboxUser | None) -> SandboxSpec:
        """The server in the sandbox, as upstream's image runs it: the sample's data copy `data` at
        /data (its only writable host path, also its cwd), run as `user` (one per sample: every server
        of the sample writes the same copy)."""
        command, args, env = self.launch(IMAGE_DATA)
        path = f"{python_servers_venv() / 'bin'}:/usr/local/bin:/usr/bin:/bin"
        return SandboxSpec(
            argv=[command, *args],
            workdir=data,
            workdir_at=IMAGE_DATA,
            env={"PATH": path, **env},
            ro_binds=self.ro_binds(),
            hostname="mcp-atlas",
            user=user,
        )


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
for _name in (
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
):
    _add(AtlasServer(_name, "none", blocker="calls live web APIs (no internet here)"))


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
    """Install the pinned packages of these servers (default: all that can run offline); idempotent."""
    chosen = [SERVERS.get(n) for n in names] if names else installable()
    if bad := [s.name for s in chosen if s.registry == "none"]:
        raise ForgeError(f"cannot install {', '.join(bad)}: {SERVERS.get(bad[0]).blocker}")
    npm = [NpmPackage(s.package, s.version, s.command) for s in chosen if s.registry == "npm"]
    if npm:
        ensure_installed(npm)
    pypi = [
        f"{s.package}=={s.version}" for s in chosen if s.registry == "pypi" and not s.executable().exists()
    ]
    if pypi:
        venv = python_servers_venv()
        if not (venv / "bin" / "python").exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
            + [*pypi, _MCP_V1],
            check=True,
        )
