"""Upstream's in-desktop server, unchanged, in a process the agent cannot trace: `python3 serve.py MAIN`.

The agent's code runs as the desktop's uid, which is the server's too; a process of the same uid may
ptrace another, read its memory or take its descriptors (`pidfd_getfd`, the server's listening socket
with them) unless that process is not dumpable. So this launcher makes itself not dumpable, then runs
MAIN (the tree's `desktop_env/server/main.py`) as `__main__` in this very process, as `python MAIN` would:
its folder first on sys.path, `__file__` set to it. Werkzeug's reloader (upstream runs Flask with
debug=True) starts its serving child from `sys.argv`, so through this launcher again.
"""

import ctypes
import os
import sys

PR_SET_DUMPABLE = 4


def main() -> None:
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise SystemExit(f"serve.py: prctl(PR_SET_DUMPABLE) failed: {os.strerror(ctypes.get_errno())}")
    server = os.path.abspath(sys.argv[1])
    # the server writes its screenshots next to itself: a link from the read-only folder into /tmp
    os.makedirs(os.path.realpath(os.path.join(os.path.dirname(server), "screenshots")), exist_ok=True)
    sys.path[0] = os.path.dirname(server)
    with open(server, encoding="utf-8") as source:
        code = compile(source.read(), server, "exec")
    namespace = sys.modules["__main__"].__dict__
    namespace["__file__"] = server
    exec(code, namespace)


if __name__ == "__main__":
    main()
