"""Programs the desktop's own python3 runs inside the desktop's sandbox, as the desktop user.

They import nothing of forge_eval (the sandbox does not see it): the host copies this folder, read-only,
into each desktop. `session.py` brings up the display and its services and runs the in-desktop server,
which is upstream's own `desktop_env/server/main.py` from the run's OSWorld tree (the host copies it into
the read-only tools folder), through `serve.py`, which keeps the agent from tracing it. The container
image runs the same programs.
"""

from pathlib import Path

INSIDE_DIR = Path(__file__).parent
