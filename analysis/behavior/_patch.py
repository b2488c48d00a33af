"""Paths a patch writes: Codex's `apply_patch` envelope and unified diffs (`git apply`, `patch`)."""

import re

from forge_eval.analysis.behavior._access import Access

_ENVELOPE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.M)
_UNIFIED = re.compile(r"^\+\+\+ (?:b/)?(.+?)(?:\t.*)?$", re.M)


def patch_accesses(patch: str) -> list[Access]:
    """One write per file the patch adds, updates, deletes or moves to, in patch order."""
    paths = [m.group(1) or m.group(2) for m in _ENVELOPE.finditer(patch)]
    if not paths:
        paths = [p for p in _UNIFIED.findall(patch) if p != "/dev/null"]
    return [Access("write", p) for p in paths]
