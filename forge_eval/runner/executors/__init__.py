"""Executors: where the shards of a run run, by name (`local`, `ray`, `kubernetes`), chosen by `--cluster`.

`executor_for("ray://head:10001")` connects the executor whose scheme the address starts with; an
unknown scheme is a usage error listing the valid forms.
"""

from forge_eval._errors import UnknownNameError
from forge_eval._registry import Registry
from forge_eval.runner.executors._executor import Executor, ShardHandle
from forge_eval.runner.executors._kubernetes import JobSettings, KubernetesExecutor
from forge_eval.runner.executors._local import LocalExecutor
from forge_eval.runner.executors._ray import RayExecutor

#: Every executor by name.
EXECUTORS: Registry[type[Executor]] = Registry("executor")
EXECUTORS.register(LocalExecutor.name, LocalExecutor)
EXECUTORS.register(RayExecutor.name, RayExecutor)
EXECUTORS.register(KubernetesExecutor.name, KubernetesExecutor)


def executor_for(cluster: str, shared: bool = False) -> Executor:
    """Connect the executor `cluster` names: `SCHEME` or `SCHEME:ADDRESS` (`ray://HOST:PORT` keeps its
    scheme in the address, as Ray's client wants it)."""
    scheme, _, rest = cluster.partition(":")
    for _, executor in EXECUTORS.items():
        if scheme in executor.schemes:
            address = cluster if rest.startswith("//") else rest
            return executor(address, shared=shared)
    forms = [form for _, executor in EXECUTORS.items() for form in executor.forms]
    raise UnknownNameError("cluster", cluster, forms)


__all__ = [
    "EXECUTORS",
    "Executor",
    "JobSettings",
    "KubernetesExecutor",
    "LocalExecutor",
    "RayExecutor",
    "ShardHandle",
    "executor_for",
]
