"""Upstream's sandbox server under uvicorn, in a process the agent cannot trace: `python -I serve.py ARGS`.

The agent's tool calls run as subprocesses of the server, as its uid; a process of the same uid may
ptrace another, read its memory or take its descriptors (`pidfd_getfd`) unless that process is not
dumpable. So this launcher makes itself not dumpable, then runs uvicorn's command line with ARGS in this
very process, as `python -m uvicorn ARGS` would (upstream's code unchanged). The commands it runs are
dumpable again once they exec: they are the agent's own. Bound read-only into the sandbox on its own.
"""

import ctypes
import os
import sys

PR_SET_DUMPABLE = 4


def main() -> None:
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise SystemExit(f"serve.py: prctl(PR_SET_DUMPABLE) failed: {os.strerror(ctypes.get_errno())}")
    from uvicorn.main import main as uvicorn  # upstream's venv

    sys.argv[0] = "uvicorn"
    uvicorn()


if __name__ == "__main__":
    main()
