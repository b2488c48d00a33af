"""Install OSWorld's checkers and the desktop's pyautogui.

Run `python -m forge_eval.benchmarks.osworld.install`.

`desktop-env` (OSWorld's evaluators, pinned) goes in with `--no-deps`: its declared dependencies pin
torch 2.5, numpy < 2, cloud SDKs and more that its checkers never import and that would downgrade this
environment. The checkers' real imports are the `osworld` extra of forge-eval (CHECKER_PACKAGES).
The desktop's own Python (Debian's python3, run as the desktop user) gets pyautogui in a separate
folder, because OSWorld's actions are pyautogui code executed on the desktop.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from pathlib import Path

from forge_eval.benchmarks._acquire import cache_root

DESKTOP_ENV = "desktop-env==1.0.2"
#: What OSWorld's getters and metrics import (same as pyproject's `osworld` extra).
CHECKER_PACKAGES = (
    "openpyxl>=3.1",
    "python-pptx>=1.0",
    "python-docx>=1.1",
    "lxml>=5",
    "cssselect>=1.2",
    "xmltodict>=0.13",
    "rapidfuzz>=3",
    "odfpy>=1.4",
    "pypdf>=4",
    "PyPDF2>=3",
    "pdfplumber>=0.11",
    "pymupdf>=1.24",
    "ImageHash>=4.3",
    "opencv-python-headless>=4.9",
    "scikit-image>=0.22",
    "mutagen>=1.47",
    "tldextract>=5",
    "pytz>=2024.1",
    "formulas>=1.2",
    "fastdtw>=0.3",
    "beautifulsoup4>=4.12",
    "gymnasium>=0.28",
    "requests-toolbelt>=1.0",
    "python-dotenv>=1.0",
    "playwright>=1.40",
)
#: pyautogui and its pure-Python helpers, for the desktop's python3 (python3-xlib, -tk, -pil come from apt).
DESKTOP_PACKAGES = (
    "pyautogui==0.9.54",
    "pymsgbox==2.0.1",
    "pytweening==1.2.0",
    "pyscreeze==1.0.1",
    "pygetwindow==0.0.9",
    "pyrect==0.2.0",
    "mouseinfo==0.1.3",
    "pyperclip==1.11.0",
)


def desktop_site() -> Path:
    """Folder with pyautogui for the desktop's python3 (copied into each desktop session)."""
    return cache_root().parent / "osworld-desktop-site"


def _pip(*args: str, quiet: bool) -> None:
    command = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        *(["-q"] if quiet else []),
        *args,
    ]
    subprocess.run(command, check=True)


def install(quiet: bool = False) -> None:
    """Install what is missing (idempotent: a second call installs nothing)."""
    if importlib.util.find_spec("desktop_env") is None:
        _pip("--no-deps", DESKTOP_ENV, quiet=quiet)
    missing = [
        p
        for p, module in zip(CHECKER_PACKAGES, _MODULES, strict=True)
        if importlib.util.find_spec(module) is None
    ]
    if missing:
        _pip(*missing, quiet=quiet)
    site = desktop_site()
    if not (site / "pyautogui").is_dir():
        _pip("--no-deps", "--target", str(site), *DESKTOP_PACKAGES, quiet=quiet)
    if not quiet:
        print(f"OSWorld checkers ready; desktop pyautogui in {site}")


#: Import name of each of CHECKER_PACKAGES, to check presence without pip.
_MODULES = (
    "openpyxl",
    "pptx",
    "docx",
    "lxml",
    "cssselect",
    "xmltodict",
    "rapidfuzz",
    "odf",
    "pypdf",
    "PyPDF2",
    "pdfplumber",
    "fitz",
    "imagehash",
    "cv2",
    "skimage",
    "mutagen",
    "tldextract",
    "pytz",
    "formulas",
    "fastdtw",
    "bs4",
    "gymnasium",
    "requests_toolbelt",
    "dotenv",
    "playwright",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quiet", action="store_true")
    install(parser.parse_args().quiet)


if __name__ == "__main__":
    main()
