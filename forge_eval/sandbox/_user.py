"""The unprivileged user a sandbox runs as: its own uid and gid, never root, never a host account.

Run as root (the CI machine, a training node), each sandbox gets a uid/gid of its own from a range no host
account uses (`FORGE_SANDBOX_UIDS`, default 1900000000:1000000). bubblewrap still starts as root (it
needs no user namespace that way, and reads any bind source), and the sandbox's first script drops to
that uid with `setpriv` (util-linux) before anything the model controls runs: no capabilities, no
supplementary groups, `no_new_privs`. No user namespace maps that uid to root, so files owned by root
keep root's permissions (a root-owned 0600 file stays unreadable), and the work directory is given to
the uid so the harness can write it while the host (root) still reads it for the verifier.

Run as another user there is nobody to drop to: the sandbox runs as that user (already unprivileged).
"""

import contextlib
import os
import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from forge_eval._errors import ForgeError

_RANGE_VARIABLE = "FORGE_SANDBOX_UIDS"
_DEFAULT_RANGE = (1_900_000_000, 1_000_000)
_NAME = "forge"
_in_use: set[int] = set()
_lock = threading.Lock()


@dataclass(frozen=True)
class SandboxUser:
    """The uid (= gid) a sandbox's processes run as, and the account files it sees for it."""

    uid: int
    name: str = _NAME

    @property
    def gid(self) -> int:
        return self.uid

    def passwd(self, home: Path) -> str:
        """/etc/passwd inside the sandbox: root, nobody and this user (node's os.userInfo() and `id` want
        an entry; the host's accounts stay out of view)."""
        return (
            "root:x:0:0:root:/root:/usr/sbin/nologin\n"
            "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
            f"{self.name}:x:{self.uid}:{self.gid}:forge sandbox:{home}:/bin/sh\n"
        )

    def group(self) -> str:
        return f"root:x:0:\nnogroup:x:65534:\n{self.name}:x:{self.gid}:\n"

    def setpriv(self, setpriv: str) -> list[str]:
        """The command prefix that becomes this user for good (run as root with CAP_SETUID/SETGID/SETPCAP)."""
        return [
            setpriv,
            f"--reuid={self.uid}",
            f"--regid={self.gid}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",
            "--",
        ]


def _uid_range() -> tuple[int, int]:
    """(first, count) of the sandbox uids: `FORGE_SANDBOX_UIDS=FIRST:COUNT`, else the default."""
    given = os.environ.get(_RANGE_VARIABLE)
    if not given:
        return _DEFAULT_RANGE
    first, _, count = given.partition(":")
    if not (first.isdigit() and count.isdigit() and int(first) >= 1000 and int(count) >= 1):
        raise ForgeError(
            f"{_RANGE_VARIABLE}={given!r} is not FIRST:COUNT with FIRST >= 1000",
            hint=f"e.g. {_RANGE_VARIABLE}=1900000000:1000000 (uids no host account uses)",
        )
    return int(first), int(count)


def _mapped(first: int, count: int) -> bool:
    """Whether this process's user namespace maps every uid of [first, first+count) (a container may map
    only 0-65535)."""
    end = first + count
    with open("/proc/self/uid_map") as f:
        for line in f:
            inside, _, length = (int(x) for x in line.split())
            if inside <= first and end <= inside + length:
                return True
    return False


def allocate() -> SandboxUser | None:
    """A uid of the range that no other live sandbox of this process holds; None when we are not root
    (the sandbox then runs as us). `release()` it when the sandbox is gone."""
    if os.geteuid() != 0:
        return None
    first, count = _uid_range()
    if not _mapped(first, count):
        raise ForgeError(
            f"the sandbox uids {first}..{first + count - 1} are not mapped in this user namespace "
            "(/proc/self/uid_map), so no sandbox can run as them",
            hint=f"set {_RANGE_VARIABLE}=FIRST:COUNT to a range of mapped uids no account uses",
        )
    with _lock:
        if len(_in_use) >= count:
            raise ForgeError(
                f"all {count} sandbox uids of {_RANGE_VARIABLE} are in use by live sandboxes",
                hint=f"widen the range ({_RANGE_VARIABLE}=FIRST:COUNT) or run fewer sandboxes at once",
            )
        while (uid := first + secrets.randbelow(count)) in _in_use:
            pass
        _in_use.add(uid)
    return SandboxUser(uid)


def release(user: SandboxUser | None) -> None:
    if user is not None:
        with _lock:
            _in_use.discard(user.uid)


@contextlib.contextmanager
def sandbox_user() -> Iterator[SandboxUser | None]:
    """One unprivileged user for several sandboxes over one work directory (the MCP servers of one
    sample), held for the block; None when we are not root (every sandbox then runs as us).

    Example:
        with sandbox_user() as user:
            spec = SandboxSpec(argv=[...], workdir=data, user=user)
    """
    user = allocate()
    try:
        yield user
    finally:
        release(user)


def give(path: Path, user: SandboxUser | None) -> None:
    """Make the tree at `path` the sandbox user's, so that it can write its work directory; root on the
    host reads it regardless. Walks by directory fd and never follows a symlink (a sandbox sharing the
    tree may be running). A tree already given (its root is the user's) is left alone."""
    if user is None or path.lstat().st_uid == user.uid:
        return
    for _, dirs, files, fd in os.fwalk(path, follow_symlinks=False):
        for name in (*dirs, *files):
            os.chown(name, user.uid, user.gid, dir_fd=fd, follow_symlinks=False)
    os.chown(path, user.uid, user.gid, follow_symlinks=False)  # last: the mark of a finished walk
