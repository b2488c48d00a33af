"""Errors a user can meet: each carries what went wrong and what to do about it.

The CLI prints them as messages (never tracebacks) and exits with `exit_code`.
"""


class ForgeError(Exception):
    """A failure the user can act on: `message` says what failed, `hint` how to fix it."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  hint: {self.hint}"


class UsageError(ForgeError):
    """Bad usage (an unknown name, a malformed option): exit status 2, like click's own."""

    exit_code = 2


class UnknownNameError(UsageError):
    """A name that is not in a registry; the message lists the valid ones."""

    def __init__(self, kind: str, name: str, valid: list[str]) -> None:
        listing = ", ".join(sorted(valid)) or "(none registered)"
        plural = kind + ("es" if kind.endswith(("s", "x", "ch", "sh")) else "s")  # harness -> harnesses
        super().__init__(f"unknown {kind} '{name}'. Valid {plural}: {listing}")
        self.kind = kind
        self.name = name
        self.valid = sorted(valid)
