"""Where the live-web benchmarks' official data and code come from: Fara's, MolmoWeb's, WebVoyager's trees.

The task data of both WebVoyager and Online-Mind2Web ships in Fara's and in MolmoWeb's repository (Fara's
copies are the older versions, MolmoWeb's the revised ones); the judges' and the MolmoWeb agent's code
is read from WebVoyager's, Fara's and MolmoWeb's trees at run time. The pins and folder layouts live here
once.
"""

from __future__ import annotations

from pathlib import Path

from forge_eval._errors import UnknownNameError
from forge_eval.benchmarks._acquire import DataSource, locate_data

FARA_REPO, FARA_REVISION = "microsoft/fara", "3f3f1fd"
MOLMOWEB_REPO, MOLMOWEB_REVISION = "allenai/molmoweb", "6a841b4"


def fara_source(benchmark: str, marker: str, folder: str) -> DataSource:
    """A file of Fara's `webeval/data/<folder>` (or of a copy of just that folder)."""
    archive_root = f"{FARA_REPO.replace('/', '-')}_{FARA_REVISION}"
    return DataSource(
        benchmark=benchmark,
        repo=FARA_REPO,
        revision=FARA_REVISION,
        marker=marker,
        subdirs=(f"webeval/data/{folder}", folder, f"{archive_root}/{folder}"),
    )


def molmoweb_source(benchmark: str, marker: str) -> DataSource:
    """A file of MolmoWeb's benchmark data (in the repository root, `data/` or `benchmarks/data/`)."""
    archive_root = f"{MOLMOWEB_REPO.replace('/', '-')}_{MOLMOWEB_REVISION}"
    return DataSource(
        benchmark=benchmark,
        repo=MOLMOWEB_REPO,
        revision=MOLMOWEB_REVISION,
        marker=marker,
        subdirs=(archive_root, "data", "benchmarks/data"),
    )


def locate_version(
    sources: dict[str, DataSource], version: str, data_dir: Path | str | None, what: str
) -> tuple[DataSource, Path]:
    """One version's source and the folder holding its data (`--data-dir`, the cache, or downloaded).

    An unknown version is a usage error that lists the known ones.
    """
    if version not in sources:
        raise UnknownNameError(f"{what} version", version, list(sources))
    return sources[version], locate_data(sources[version], data_dir)


# Upstream code read at run time: the judges' and the MolmoWeb agent's prompts and message construction.
WEBVOYAGER_REPO, WEBVOYAGER_REVISION = "MinorJerry/WebVoyager", "5a78967"


def _code_source(name: str, repo: str, revision: str, marker: str) -> DataSource:
    """An upstream repository as a tree of code: a clone at `revision`, or the folder holding such
    clones named `owner+name@revision` (how the pinned trees are kept side by side)."""
    return DataSource(
        benchmark=name,
        repo=repo,
        revision=revision,
        marker=marker,
        subdirs=(f"{repo.replace('/', '+')}@{revision}",),
    )


#: WebVoyager's own judge (`auto_eval_by_gpt4v`) and its evaluation script's settings.
WEBVOYAGER_TREE = _code_source(
    "webvoyager-code", WEBVOYAGER_REPO, WEBVOYAGER_REVISION, "evaluation/auto_eval.py"
)
#: Fara's Online-Mind2Web engine: WebJudge's prompts and message construction, its verdict extraction.
FARA_TREE = _code_source(
    "fara-code",
    FARA_REPO,
    FARA_REVISION,
    "webeval/src/webeval/benchmarks/om2w/impl/src/methods/webjudge_online_mind2web.py",
)
#: MolmoWeb's agent: its prompt template (`agent/multimodal_agent.py`) and sampling defaults.
MOLMOWEB_TREE = _code_source("molmoweb-code", MOLMOWEB_REPO, MOLMOWEB_REVISION, "agent/multimodal_agent.py")

_located: dict[str, Path] = {}


def locate_tree(source: DataSource, upstream_dir: Path | str | None = None) -> Path:
    """The pinned upstream tree: in `upstream_dir` (a clone, or the folder holding `owner+name@commit`
    trees), else the cache, else downloaded once. Remembered, so later calls in the run (the judge block
    of results.json, the protocol record) find the same tree without the option."""
    if upstream_dir is None and source.benchmark in _located:
        return _located[source.benchmark]
    found = locate_data(source, upstream_dir)
    _located[source.benchmark] = found
    return found
