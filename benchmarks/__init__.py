"""Benchmarks: one package per benchmark, registered by name in `BENCHMARKS`."""

from forge_eval._registry import Registry
from forge_eval.benchmarks._benchmark import SAMPLING_KEYS, Benchmark, OfficialSettings, RunUsed, task_set


def _load() -> None:
    # Importing a benchmark package registers it.
    import forge_eval.benchmarks.claweval  # noqa: F401
    import forge_eval.benchmarks.forgelab  # noqa: F401
    import forge_eval.benchmarks.mcpatlas  # noqa: F401
    import forge_eval.benchmarks.online_mind2web  # noqa: F401
    import forge_eval.benchmarks.osworld  # noqa: F401
    import forge_eval.benchmarks.qwenclawbench  # noqa: F401
    import forge_eval.benchmarks.weblab  # noqa: F401
    import forge_eval.benchmarks.webvoyager  # noqa: F401


BENCHMARKS: Registry[Benchmark] = Registry("benchmark", _load)

__all__ = ["BENCHMARKS", "SAMPLING_KEYS", "Benchmark", "OfficialSettings", "RunUsed", "task_set"]
