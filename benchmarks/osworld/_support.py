"""Which OSWorld tasks a provider can run, and why not: every other task is skipped with its reason.

A skipped task is reported as skipped, never scored 0. The rules read the task JSON only (apps, config
steps, getters, metrics, URLs) plus what is installed here, so `skipped()` is cheap and needs no desktop.
"""

from __future__ import annotations

import glob
import re
import shutil
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from forge_eval._registry import Registry
from forge_eval.benchmarks.osworld._chrome import CHROMIUM, LAUNCHER
from forge_eval.benchmarks.osworld._data import OSWorldTask, _as_list, missing_files, online
from forge_eval.benchmarks.osworld._evaluators import desktop_env, metric_needs
from forge_eval.benchmarks.osworld.install import desktop_site

#: App names in `related_apps` -> the program the local desktop needs for them.
APP_PROGRAMS = {
    "libreoffice_calc": "libreoffice",
    "libreoffice calc": "libreoffice",
    "calc": "libreoffice",
    "libreoffice_impress": "libreoffice",
    "libreoffice_writer": "libreoffice",
    "libreoffice": "libreoffice",
    "gimp": "gimp",
    "vlc": "vlc",
    "thunderbird": "thunderbird",
}
#: Programs the local desktop brings in its tools folder (the `chrome` rule checks what they need).
DESKTOP_PROGRAMS = {LAUNCHER: CHROMIUM}
#: Chrome tasks whose checker passes on Chromium's fresh profile with no action taken (so a score would
#: say nothing), with why.
CHROMIUM_PASSES = {
    "99146c54-4f37-4ab8-9327-5f3291665e1e": "its checker passes with no action on Chromium's fresh profile "
    "(getter data_delete_automacally: the profile holds default_content_setting_values from its first start)",
}
#: Getters that need something the local desktop does not offer, and what.
UNSUPPORTED_GETTERS = {
    "googledrive_file": "Google Drive",
    "vscode_config": "VS Code",
    "replay": "a recorded replay",
}
_WEB = re.compile(r"https?://(?!localhost|127\.0\.0\.1)[^\s\"']+")
_HOSTED_FILES = "huggingface.co/datasets/xlangai"
#: GNOME's pieces that run without gnome-shell (the session bus starts dconf and gnome-terminal-server),
#: each with the Debian package that ships it; any other `gnome-*` program needs a GNOME session.
GNOME_PROGRAMS = {
    "gsettings": "libglib2.0-bin",
    "dconf": "dconf-cli",
    "nautilus": "nautilus",
    "gnome-terminal": "gnome-terminal",
    "gnome-terminal-server": "gnome-terminal",
}
#: Getters that read GNOME's pieces: the program each needs (the terminal's text comes through AT-SPI).
GETTER_PROGRAMS = {"vm_terminal_output": "gnome-terminal", "vm_wallpaper": "gsettings"}
_GNOME = re.compile(r"\b(gsettings|gnome-[a-z-]+|dconf|nautilus)\b")
_SCHEMA = re.compile(r"\bgsettings\s+(?:get|set|reset)\s+([\w.-]+)")
#: GSettings' dconf back-end: without it gsettings keeps each value in its own process's memory.
_DCONF_BACKEND = "/usr/lib/*/gio/modules/libdconfsettings.so"
_SYSTEMD = re.compile(r"\b(systemctl|timedatectl|hostnamectl|loginctl)\b")
_SHELL_WORDS = {
    "if",
    "then",
    "else",
    "fi",
    "for",
    "do",
    "done",
    "export",
    "echo",
    "test",
    "cd",
    "true",
    "false",
}
#: `sudo ... apt-get install PKG...` / `sudo ... pip install PKG...`: what a setup installs as root.
_ROOT_INSTALL = re.compile(r"\bsudo\b[^&|;]*?\b(apt-get|apt|pip3?)\s+install\s+([^&|;\n]+)")
#: A checker that reads a user account the agent made (useradd, getent passwd).
_ACCOUNTS = re.compile(r"\b(useradd|adduser|getent passwd)\b")


@dataclass(frozen=True)
class SupportContext:
    """What the rules may consult: the provider, whether task files can still be downloaded, and the
    OSWorld tree whose checkers score the tasks."""

    provider: str
    may_download: bool
    tree: Path


Rule = Callable[[OSWorldTask, SupportContext], str | None]
RULES: Registry[Rule] = Registry("support rule")


def _steps(task: OSWorldTask) -> list[dict[str, Any]]:
    return task.config + list(task.evaluator.get("postconfig", []))


def _commands(task: OSWorldTask) -> list[str]:
    """Every command of the setup, postconfig and command-line getters, as text."""
    texts = []
    for step in _steps(task):
        params = step.get("parameters", {})
        if "command" in params:
            texts.append(" ".join(_as_list(params["command"])))
    for key in ("result", "expected"):
        for getter in _as_list(task.evaluator.get(key)):
            if isinstance(getter, dict) and "command" in getter:
                texts.append(" ".join(_as_list(getter["command"])))
    return texts


def _getters(task: OSWorldTask) -> list[str]:
    return [
        g["type"]
        for key in ("result", "expected")
        for g in _as_list(task.evaluator.get(key))
        if isinstance(g, dict) and "type" in g
    ]


def _local_only(rule: Rule) -> Rule:
    """The rule applies to desktops we build (local, podman, docker); OSWorld's own VM has everything."""

    def apply(task: OSWorldTask, ctx: SupportContext) -> str | None:
        return None if ctx.provider == "vm" else rule(task, ctx)

    return apply


@_local_only
def _vs_code(task: OSWorldTask, ctx: SupportContext) -> str | None:
    apps = {a.lower() for a in task.raw.get("related_apps", [])}
    if task.domain == "vs_code" or apps & {"vscode", "vs_code", "code"}:
        return "needs VS Code (not packaged for Debian); run it with --provider vm"
    return None


def _uses_chrome(task: OSWorldTask) -> bool:
    apps = {a.lower() for a in task.raw.get("related_apps", [])}
    uses = any(s.get("type", "").startswith("chrome_") for s in _steps(task)) or LAUNCHER in " ".join(
        _commands(task)
    )
    return bool(task.domain == "chrome" or uses or apps & {"chrome", "browser"})


@_local_only
def _chrome(task: OSWorldTask, ctx: SupportContext) -> str | None:
    """Chrome tasks run on Debian's Chromium, launched as `google-chrome` (`_chrome`)."""
    if not _uses_chrome(task):
        return None
    if not CHROMIUM.is_file():
        return (
            f"needs Chromium (standing in for Google Chrome): {CHROMIUM} is not installed "
            "(apt package chromium, scripts/setup.d/50-chromium.sh)"
        )
    return CHROMIUM_PASSES.get(task.id)


def _account(task: OSWorldTask, ctx: SupportContext) -> str | None:
    types = {s.get("type") for s in _steps(task)} | set(_getters(task))
    if types & {"googledrive", "login", "googledrive_file"}:
        return "needs a Google Drive account / a login"
    return None


@_local_only
def _live_web(task: OSWorldTask, ctx: SupportContext) -> str | None:
    """Offline, a task that opens live sites is skipped. Online, the local desktop's Chromium reaches
    them through the run's egress gate (`_chrome`), the only way out of the desktop: a task whose other
    programs fetch from the web (wget, curl, pip in its steps) stays skipped."""
    reason = _web_need(task)
    if reason is None:
        return None
    if not ctx.may_download:
        return f"{reason}; this machine is offline"
    if ctx.provider != "local":
        return f"{reason}; only the local desktop has a way to it (the run's egress gate)"
    if not _uses_chrome(task) or _fetches_outside_chrome(task):
        return f"{reason} from a program other than Chromium, the only one with a way to it"
    return None


def _fetches_outside_chrome(task: OSWorldTask) -> bool:
    """Whether a setup, postconfig or getter command other than Chrome's launch names a live URL."""
    return any(
        not command.startswith(LAUNCHER) and any(_HOSTED_FILES not in u for u in _WEB.findall(command))
        for command in _commands(task)
    )


def _web_need(task: OSWorldTask) -> str | None:
    """What of the live web a task's steps, getters or instruction name (None: nothing)."""
    if task.raw.get("proxy"):
        return "needs the live web (task marked proxy: true)"
    text = " ".join(_commands(task)) + " " + str([s for s in _steps(task) if s.get("type") != "download"])
    getters_text = str(
        [
            g
            for k in ("result", "expected")
            for g in _as_list(task.evaluator.get(k))
            if isinstance(g, dict) and g.get("type") != "cloud_file"
        ]
    )
    urls = [u for u in _WEB.findall(text + getters_text) if _HOSTED_FILES not in u]
    if urls or task.infeasible is False and _WEB.search(task.instruction) and "http" in task.instruction:
        return f"needs the live web ({(urls or ['a URL in the instruction'])[0][:80]})"
    return None


@_local_only
def _gnome(task: OSWorldTask, ctx: SupportContext) -> str | None:
    """GNOME's programs run on the openbox desktop when installed; gnome-shell's own are not there."""
    text = " ".join(_commands(task))
    for found in dict.fromkeys(_GNOME.findall(text)):
        if found not in GNOME_PROGRAMS:
            return f"needs a GNOME session ({found}); the local desktop is Xvfb + openbox"
        program = found.removesuffix("-server")
        if shutil.which(program) is None:
            return (
                f"needs {program} (apt package {GNOME_PROGRAMS[found]}), not installed here "
                "(scripts/setup.d/60-desktop.sh)"
            )
    if "gsettings" in text and not glob.glob(_DCONF_BACKEND):
        return "needs GSettings' dconf back-end (apt package dconf-gsettings-backend), not installed here"
    for schema in dict.fromkeys(_SCHEMA.findall(text)):
        if schema not in _gsettings_schemas():
            return f"needs the GSettings schema {schema}, not installed here (scripts/setup.d/60-desktop.sh)"
    if found := _SYSTEMD.search(text):
        return f"needs systemd ({found.group(0)}); the local desktop has no init system"
    return None


@_local_only
def _sudo(task: OSWorldTask, ctx: SupportContext) -> str | None:
    """`sudo` is root in the desktop's own user namespace (`_inside/sudo.py`): it writes what the desktop
    user owns, never the host's read-only /usr and /etc, so what a step installs as root must be here."""
    text = "\n".join(_commands(task))
    for installer, names in _ROOT_INSTALL.findall(text):
        for name in (n for n in names.split() if not n.startswith("-")):
            if not _installed(installer, name):
                return (
                    f"its setup installs {name} as root ({installer} install), which root inside the box "
                    "cannot (the host's /usr is read-only there); install it here "
                    "(scripts/setup.d/60-desktop.sh)"
                )
    if found := _ACCOUNTS.search(text):
        return f"needs a new user account ({found.group(0)}); the box's /etc/passwd is the host's, read-only"
    return None


@cache
def _gsettings_schemas() -> frozenset[str]:
    """The GSettings schemas installed here (none without gsettings)."""
    if shutil.which("gsettings") is None:
        return frozenset()
    listed = [
        subprocess.run(["gsettings", kind], capture_output=True, text=True).stdout.split()
        for kind in ("list-schemas", "list-relocatable-schemas")
    ]
    return frozenset(name for names in listed for name in names)


def _installed(installer: str, name: str) -> bool:
    """Whether Debian package (apt) or desktop Python package (pip) `name` is installed here."""
    if installer.startswith("apt"):
        if shutil.which("dpkg-query") is None:
            return False
        status = subprocess.run(["dpkg-query", "-W", "-f=${Status}", name], capture_output=True, text=True)
        return status.stdout.endswith("install ok installed")
    wanted = re.sub(r"[-_.]+", "_", name).lower()
    site = desktop_site()
    found = site.glob("*.dist-info") if site.is_dir() else []
    return any(re.sub(r"[-_.]+", "_", d.name.split("-", 1)[0]).lower() == wanted for d in found)


@_local_only
def _programs(task: OSWorldTask, ctx: SupportContext) -> str | None:
    needed = {APP_PROGRAMS[a.lower()] for a in task.raw.get("related_apps", []) if a.lower() in APP_PROGRAMS}
    for step in _steps(task):
        if step.get("type") in ("launch", "command", "execute"):
            command = _as_list(step.get("parameters", {}).get("command"))
            # a shell text's every line (`export DBUS_SESSION_BUS_ADDRESS=...` then the program)
            for line in str(command[0]).splitlines() if command else []:
                first = line.split()[0] if line.split() else ""
                if (
                    first
                    and first not in _SHELL_WORDS
                    and not first.startswith(("python", "{", "/"))
                    and "=" not in first
                ):
                    needed.add(first)
    for getter in [g for k in ("result", "expected") for g in _as_list(task.evaluator.get(k))]:
        if isinstance(getter, dict) and getter.get("type") == "vm_command_line":
            for line in " ".join(_as_list(getter.get("command"))).splitlines():
                first = line.split()[0] if line.split() else ""
                if first.isidentifier() and first not in _SHELL_WORDS:
                    needed.add(first)
    missing = sorted(p for p in needed - set(DESKTOP_PROGRAMS) if shutil.which(p) is None)
    if missing:
        return f"needs programs not installed here: {', '.join(missing)} (scripts/setup.d/60-desktop.sh)"
    return None


@_local_only
def _getter_support(task: OSWorldTask, ctx: SupportContext) -> str | None:
    for getter in _getters(task):
        if getter in UNSUPPORTED_GETTERS:
            return (
                f"its checker reads {UNSUPPORTED_GETTERS[getter]} (getter {getter}), which this desktop lacks"
            )
        if (program := GETTER_PROGRAMS.get(getter)) and shutil.which(program) is None:
            return (
                f"its checker (getter {getter}) needs {program}, not installed here "
                "(scripts/setup.d/60-desktop.sh)"
            )
    return None


def _checker_installed(task: OSWorldTask, ctx: SupportContext) -> str | None:
    api = desktop_env(ctx.tree)
    for func in _as_list(task.evaluator.get("func")):
        if not hasattr(api.metrics, func):
            return f"metric {func} is not in the OSWorld tree's desktop_env"
        if package := metric_needs(ctx.tree, func):
            return f"metric {func} needs the package {package} (pip install {package})"
    for getter in _getters(task):
        if not hasattr(api.getters, f"get_{getter}"):
            return f"getter {getter} is not in the OSWorld tree's desktop_env"
    return None


def _files(task: OSWorldTask, ctx: SupportContext) -> str | None:
    missing = missing_files(task)
    if missing and not ctx.may_download:
        return (
            f"task files not downloaded ({len(missing)} missing, e.g. {missing[0][:90]}) and their host "
            "is unreachable; run once online or fill the cache"
        )
    return None


for _name, _rule in (
    ("vs_code", _vs_code),
    ("chrome", _chrome),
    ("account", _account),
    ("live_web", _live_web),
    ("gnome", _gnome),
    ("sudo", _sudo),
    ("programs", _programs),
    ("getters", _getter_support),
    ("checker", _checker_installed),
    ("files", _files),
):
    RULES.register(_name, _rule)

#: Order the rules are asked in: the first reason found is the one reported.
RULE_ORDER = (
    "account",
    "vs_code",
    "chrome",
    "live_web",
    "gnome",
    "sudo",
    "getters",
    "programs",
    "files",
    "checker",
)


def split_runnable(
    tasks: Iterable[OSWorldTask], ctx: SupportContext
) -> tuple[list[OSWorldTask], dict[str, str]]:
    """`tasks` split into those `ctx.provider` runs and the skipped ones (id -> reason)."""
    run: list[OSWorldTask] = []
    skipped: dict[str, str] = {}
    for task in tasks:
        reason = skip_reason(task, ctx)
        if reason is None:
            run.append(task)
        else:
            skipped[task.id] = reason
    return run, skipped


def skip_reason(task: OSWorldTask, ctx: SupportContext) -> str | None:
    """Why `task` cannot run in `ctx.provider`, or None when it can."""
    for name in RULE_ORDER:
        if task.infeasible and name in ("getters", "checker"):
            continue  # scored from the agent's last action alone (upstream: 1 iff it is FAIL)
        if reason := RULES.get(name)(task, ctx):
            return reason
    return None


def support_context(provider: str, tree: Path) -> SupportContext:
    return SupportContext(provider=provider, may_download=online(), tree=tree)
