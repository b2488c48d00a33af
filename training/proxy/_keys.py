"""Signed rollout keys: `fk.<rollout>.<attempt>.<hmac>`, so a harness that can only set an API key
(not its base URL path) still lands in the right rollout, and a guessed or edited key is refused."""

import hashlib
import hmac
import re

ROLLOUT_ID = re.compile(r"^[A-Za-z0-9_:\-]{1,128}$")
_PREFIX = "fk"


def sign_key(secret: str, rollout_id: str, attempt: int) -> str:
    """The API key that identifies (`rollout_id`, `attempt`) to a proxy holding `secret`."""
    return f"{_PREFIX}.{rollout_id}.{attempt}.{_mac(secret, rollout_id, attempt)}"


def verify_key(secret: str, key: str) -> tuple[str, int] | None:
    """(rollout_id, attempt) of a correctly signed key, None for anything else."""
    parts = key.split(".")
    if len(parts) != 4 or parts[0] != _PREFIX or not ROLLOUT_ID.match(parts[1]) or not parts[2].isdigit():
        return None
    rollout_id, attempt = parts[1], int(parts[2])
    if not hmac.compare_digest(parts[3], _mac(secret, rollout_id, attempt)):
        return None
    return rollout_id, attempt


def _mac(secret: str, rollout_id: str, attempt: int) -> str:
    message = f"{rollout_id}\x00{attempt}".encode()
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()[:40]
