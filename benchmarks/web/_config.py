"""Which browser to launch and how: executable discovery, flags, viewport, network policy."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from forge_eval._errors import ForgeError

#: Environment variable that names the browser binary to launch (takes precedence over discovery).
EXECUTABLE_ENV = "FORGE_BROWSER"

# The distro's real binaries, not the /usr/bin/chromium shell wrapper (it adds flags and prints a
# warning from its /dev/shm check); headless-shell first because it launches 2-3x faster.
_SYSTEM_CANDIDATES = {
    True: (
        "/usr/lib/chromium/chromium-headless-shell",
        "chromium-headless-shell",
        "/usr/lib/chromium/chromium",
        "chromium",
    ),
    False: ("/usr/lib/chromium/chromium", "chromium", "google-chrome"),
}

# Background networking off so that an offline run makes no requests of its own (and stays hermetic);
# WebRTC only through the proxy, so that a page's UDP cannot reach an address the egress gate refuses.
BASE_FLAGS = (
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
)


class BrowserUnavailableError(ForgeError):
    """No usable browser (or no Playwright) on this machine."""


@dataclass(frozen=True)
class BrowserConfig:
    """How episodes see the web.

    Attributes:
        executable: Browser binary; None = `$FORGE_BROWSER`, else Playwright's own, else system Chromium.
        headless_shell: Prefer chromium-headless-shell (faster) over full Chromium (higher fidelity).
        width, height: Viewport in CSS pixels (the MolmoWeb protocol uses 1280x720).
        locale, timezone: Fixed so that dates and number formats do not depend on the host.
        offline: Chromium resolves no name and reaches no address of its own (it runs in the project's
            sandbox, without a network); the benchmark's sites (`host_map`, `local_origins`) are served
            through the context's router. Online, Chromium's connections go through the episode's egress
            gate, which admits public addresses only.
        allowed_hosts: Online, the public hosts an episode may load (None = any public host).
        host_map: Real hostname -> local base URL; requests to the hostname are served by the local site
            while the address bar keeps the real URL (so official start URLs run against local clones).
        local_origins: The benchmark's own local servers (`http://127.0.0.1:8123`), loaded as they are.
            Any other loopback, private or link-local host port is refused (see `_policy.py`).
        settle_ms: Pause after each action before waiting for the page to be quiet.
        step_timeout_s: Upper bound on one action plus its settle.
    """

    executable: str | None = None
    headless_shell: bool = True
    width: int = 1280
    height: int = 720
    locale: str = "en-US"
    timezone: str = "UTC"
    offline: bool = True
    allowed_hosts: tuple[str, ...] | None = None
    host_map: dict[str, str] = field(default_factory=dict)
    local_origins: tuple[str, ...] = ()
    settle_ms: int = 50
    step_timeout_s: float = 30.0

    def launch_args(self) -> list[str]:
        args = list(BASE_FLAGS)
        if self.offline:
            # Every name and literal address (127.0.0.1, [::1] too) fails to resolve: whatever the page
            # or a redirect asks for, Chromium's own network reaches nothing.
            args.append("--host-resolver-rules=MAP * ~NOTFOUND")
        return args


def find_executable(config: BrowserConfig) -> str | None:
    """The browser binary to launch, or None to let Playwright use the browser it manages."""
    explicit = config.executable or os.environ.get(EXECUTABLE_ENV)
    if explicit:
        path = shutil.which(explicit) or (explicit if Path(explicit).is_file() else None)
        if path is None:
            raise BrowserUnavailableError(
                f"the configured browser '{explicit}' does not exist",
                hint=f"point {EXECUTABLE_ENV} (or the executable option) at a Chromium binary",
            )
        return path
    if _playwright_browser_installed():
        return None
    for candidate in _SYSTEM_CANDIDATES[config.headless_shell]:
        path = shutil.which(candidate) or (candidate if Path(candidate).is_file() else None)
        if path:
            return path
    raise BrowserUnavailableError(
        "no Chromium found (no $FORGE_BROWSER, no Playwright-managed browser, no system Chromium)",
        hint="on Debian: apt-get install chromium chromium-headless-shell (scripts/setup.d/50-chromium.sh)",
    )


def _playwright_browser_installed() -> bool:
    """Whether `playwright install chromium` has put a browser in Playwright's cache."""
    root = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or Path.home() / ".cache" / "ms-playwright")
    return any(root.glob("chromium*/chrome-linux*/*chrom*")) if root.is_dir() else False


def require_playwright() -> None:
    """Fail with an install hint when the optional Playwright dependency is missing."""
    try:
        import playwright  # noqa: F401  # optional: the `web` extra
    except ImportError:
        raise BrowserUnavailableError(
            "the web benchmarks need Playwright, which is not installed",
            hint="pip install 'forge-eval[web]' (and a Chromium: apt-get install chromium-headless-shell)",
        ) from None


def browser_build() -> str:
    """The Chromium this machine runs the episodes in (`--version`), or why it cannot tell."""
    try:
        executable = find_executable(BrowserConfig())
    except BrowserUnavailableError as e:
        return f"unknown ({e})"
    if executable is None:
        return "Playwright's own Chromium"
    try:
        done = subprocess.run([executable, "--version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{executable} (version unknown: {e})"
    return done.stdout.strip() or f"{executable} (version unknown)"


def browser_requirements(config: BrowserConfig | None = None) -> list[str]:
    """What is missing to run a browser here (Playwright, a Chromium), one message each."""
    missing = []
    for check in (require_playwright, lambda: find_executable(config or BrowserConfig())):
        try:
            check()
        except BrowserUnavailableError as e:
            missing.append(str(e))
    return missing
