"""weblab: forge-eval's offline web benchmark, with ground truth.

Six small sites (Starlette, seeded data, real HTML and JavaScript) modelled on sites WebVoyager uses:
a shop, flight search, recipes, an encyclopedia, news and a dictionary, each served under its own
hostname through the browser's routing. 31 tasks: information tasks (answer checked) and action tasks
(the site's server state checked), easy to hard; every one is solved by a scripted oracle through the real
browser (`run_oracle`). Judges can run beside the verifier (`-T judges=webvoyager,webjudge`) to measure
how often LLM judges agree with ground truth.
"""

from forge_eval.benchmarks._benchmark import BENCHMARKS
from forge_eval.benchmarks.weblab._agreement import (
    Agreement,
    agreement_from_log,
    agreement_task,
    cohen_kappa,
    confusion,
    judge_agreement,
)
from forge_eval.benchmarks.weblab._benchmark import Weblab
from forge_eval.benchmarks.weblab._checks import Verdict, normalize, verify
from forge_eval.benchmarks.weblab._data import QUICK_SUBSET, TASKS, WebTask, select_tasks, task_of
from forge_eval.benchmarks.weblab._oracle import oracle_agent, run_oracle
from forge_eval.benchmarks.weblab._scorer import site_state, weblab_verifier
from forge_eval.benchmarks.weblab._site import Site
from forge_eval.benchmarks.weblab._sites import SITES, clone_host_map, clone_map, host_map, sites
from forge_eval.benchmarks.weblab._task import weblab

BENCHMARKS.register(Weblab.name, Weblab())

__all__ = [
    "Agreement",
    "QUICK_SUBSET",
    "SITES",
    "TASKS",
    "Site",
    "Verdict",
    "WebTask",
    "Weblab",
    "agreement_from_log",
    "agreement_task",
    "clone_host_map",
    "clone_map",
    "cohen_kappa",
    "confusion",
    "judge_agreement",
    "oracle_agent",
    "host_map",
    "normalize",
    "run_oracle",
    "select_tasks",
    "site_state",
    "sites",
    "task_of",
    "verify",
    "weblab",
    "weblab_verifier",
]
