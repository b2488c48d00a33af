"""What a run is: the user's choices, resolved and validated once, recorded verbatim in results.json."""

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from forge_eval.rundir import RunDir


@dataclass(frozen=True)
class RunSpec:
    """One `forge-eval run`.

    Attributes:
        benchmark: Registered benchmark name.
        seeds: Run seeds; each becomes one Inspect task whose GenerateConfig.seed is that seed.
        epochs: Trials per task per seed (pass@k / pass^k use k <= epochs); None = the benchmark's
            official trial count.
        model: An embedded model name (`forge-eval list`), an Inspect model string, or None for the
            embedded default.
        harness: Registered harness name, or None for the benchmark's default.
        out: The run directory (logs/, results.json, trials.csv, report.html).
        limit: Run only the first `limit` tasks.
        quick: Run only the benchmark's quick subset.
        task_options: Extra task arguments (`-T k=v`).
        model_base_url: Base URL for an OpenAI-compatible endpoint (with an Inspect model string).
        model_args: Extra Inspect model arguments (`-M k=v`).
        temperature: Sampling temperature (None = the model's default).
        max_tokens: Most tokens per model reply (None = the benchmark's setting; for an embedded
            model, its default reply cap).
        max_connections: Concurrent model connections (None = Inspect's default, 2 for the embedded model).
        judge: Inspect model string (or embedded model name) bound to the benchmark's judge role;
            None = the official judge.
        model_roles: Other Inspect model roles the benchmark's code calls (role -> Inspect model string
            or embedded model name; `--model-role ROLE=MODEL`), e.g. Claw-Eval's simulated `user`.
        data_dir: The benchmark's task data (`Benchmark.accepts_data_dir`); None = its own source.
        deterministic: Serve the embedded model in its exactly repeatable mode (slower).
        no_sandbox: Run harness programs (codex, claude-code, openclaw) as plain host processes instead of
            in the local sandbox (`--no-sandbox`; unisolated, for debugging).
        shared_run_dir: Leave the run directory's modes to the umask (`--shared-run-dir`) instead of
            making it readable by this uid only (`forge_eval.rundir.make_private`).
        allow_modified_tree: Run on an upstream tree whose files differ from the pinned commit's where the
            run reads them (`--allow-modified-tree`); the protocol record then says so.
        command: The exact command line, recorded for reproducibility.
    """

    benchmark: str
    seeds: tuple[int, ...]
    out: Path
    epochs: int | None = None
    model: str | None = None
    harness: str | None = None
    limit: int | None = None
    quick: bool = False
    task_options: dict[str, Any] = field(default_factory=dict)
    model_base_url: str | None = None
    model_args: dict[str, Any] = field(default_factory=dict)
    temperature: float | None = None
    max_tokens: int | None = None
    max_connections: int | None = None
    judge: str | None = None
    model_roles: dict[str, str] = field(default_factory=dict)
    data_dir: Path | None = None
    deterministic: bool = False
    no_sandbox: bool = False
    shared_run_dir: bool = False
    allow_modified_tree: bool = False
    command: str = ""

    @property
    def log_dir(self) -> Path:
        return RunDir(self.out).logs

    def to_dict(self) -> dict[str, Any]:
        """The spec as JSON data: what a worker on another machine plans its shard from."""
        data = asdict(self)
        data.update(out=str(self.out), seeds=list(self.seeds))
        data["data_dir"] = str(self.data_dir) if self.data_dir else None
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RunSpec":
        fields = dict(data, out=Path(data["out"]), seeds=tuple(data["seeds"]))
        fields["data_dir"] = Path(data["data_dir"]) if data.get("data_dir") else None
        return cls(**fields)
