"""OSWorld-Verified: desktop tasks on a real desktop, scored by OSWorld's own checkers.

Providers (`local` Xvfb desktop, `podman`/`docker` container, OSWorld's own `vm`) sit behind one
interface; OSWorld's own in-VM server, setup code, getters, metrics and baseline agent run unchanged,
read at run time from the pinned OSWorld tree that also holds the task data. The local desktop runs whole
in a bubblewrap sandbox as a throw-away uid: the agent's actions cannot reach the host. Tasks a provider
cannot run are listed as skipped with their reason.
"""

from forge_eval.benchmarks._benchmark import BENCHMARKS
from forge_eval.benchmarks.osworld._benchmark import OSWorld
from forge_eval.benchmarks.osworld._census import CensusRow, census, census_table
from forge_eval.benchmarks.osworld._client import DesktopClient
from forge_eval.benchmarks.osworld._container import ContainerDesktop
from forge_eval.benchmarks.osworld._data import SOURCE, OSWorldTask, data_root, load_tasks
from forge_eval.benchmarks.osworld._desktop import LocalDesktop, clean_leftovers
from forge_eval.benchmarks.osworld._env import ACTION_SPACES, OBSERVATION_TYPES, STEP_CAPS, make_env
from forge_eval.benchmarks.osworld._providers import PROVIDERS, Provider, Session, make_provider
from forge_eval.benchmarks.osworld._support import RULES, SupportContext, skip_reason, split_runnable
from forge_eval.benchmarks.osworld._task import Episode, evaluate, osworld, runnable, start_episode

BENCHMARKS.register(OSWorld.name, OSWorld())

__all__ = [
    "ACTION_SPACES",
    "OBSERVATION_TYPES",
    "PROVIDERS",
    "RULES",
    "SOURCE",
    "STEP_CAPS",
    "CensusRow",
    "ContainerDesktop",
    "DesktopClient",
    "Episode",
    "LocalDesktop",
    "OSWorld",
    "OSWorldTask",
    "Provider",
    "Session",
    "SupportContext",
    "census",
    "census_table",
    "clean_leftovers",
    "data_root",
    "evaluate",
    "load_tasks",
    "make_env",
    "make_provider",
    "osworld",
    "runnable",
    "skip_reason",
    "split_runnable",
    "start_episode",
]
