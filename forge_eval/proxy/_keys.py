"""Signed rollout keys: `fk.<rollout>.<attempt>.<hmac>`, so a harness that can only set an API key
(not its base URL path) still lands in the right rollout, and a guessed or edited key is refused.

Rollout ids and attempts are matched whole (`fullmatch`) and as ASCII: `$` would let "r1\\n" through and
`str.isdigit` accepts "²", which `int` then rejects.
"""

import functools
import hashlib
import hmac
import re

ROLLOUT_ID = re.compile(r"[A-Za-z0-9_:\-]{1,128}")
_ATTEMPT = re.compile(r"[0-9]{1,9}")
_PREFIX = "fk"


def valid_rollout_id(value: object) -> bool:
    return isinstance(value, str) and ROLLOUT_ID.fullmatch(value) is not None


def parse_attempt(value: object) -> int | None:
    """An attempt number from a URL, query or JSON field (an int or ASCII digits), None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value < 10**9 else None
    if isinstance(value, str) and _ATTEMPT.fullmatch(value):
        return int(value)
    return None


def sign_key(secret: str, rollout_id: str, attempt: int) -> str:
    """The API key that identifies (`rollout_id`, `attempt`) to a proxy holding `secret`."""
    return f"{_PREFIX}.{rollout_id}.{attempt}.{_mac(secret, rollout_id, attempt)}"


@functools.lru_cache(maxsize=4096)  # every call checks its key: the HMAC is ~5 µs, a hit ~0.1 µs
def verify_key(secret: str, key: str) -> tuple[str, int] | None:
    """(rollout_id, attempt) of a correctly signed key, None for anything else."""
    parts = key.split(".")
    if len(parts) != 4 or parts[0] != _PREFIX or not valid_rollout_id(parts[1]):
        return None
    attempt = parse_attempt(parts[2])
    if attempt is None or parts[2] != str(attempt):  # one spelling per key: no leading zeros
        return None
    if not hmac.compare_digest(parts[3].encode(), _mac(secret, parts[1], attempt).encode()):
        return None
    return parts[1], attempt


def _mac(secret: str, rollout_id: str, attempt: int) -> str:
    message = f"{rollout_id}\x00{attempt}".encode()
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()[:40]
