"""Screenshot text for judges that cannot see images: tesseract OCR (Debian `tesseract-ocr`), cached."""

from __future__ import annotations

import functools
import hashlib
import shutil
import subprocess

_cache: dict[str, str] = {}


@functools.cache
def ocr_available() -> bool:
    return shutil.which("tesseract") is not None


def ocr(png: bytes, timeout_s: float = 60.0) -> str:
    """The text tesseract reads in a PNG screenshot ('' when tesseract is missing or fails)."""
    if not ocr_available():
        return ""
    key = hashlib.sha256(png).hexdigest()
    if key not in _cache:
        try:
            done = subprocess.run(
                ["tesseract", "stdin", "stdout", "--psm", "3"],
                input=png,
                capture_output=True,
                timeout=timeout_s,
                check=False,
                env={"OMP_THREAD_LIMIT": "1", "PATH": "/usr/bin:/bin"},
            )
            _cache[key] = done.stdout.decode(errors="replace").strip() if done.returncode == 0 else ""
        except subprocess.TimeoutExpired:
            _cache[key] = ""
    return _cache[key]
