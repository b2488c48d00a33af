"""The protocol record of a run (results.json `protocol`): is this number the benchmark's number?

For every element of a benchmark's official protocol (`ELEMENTS`: task set, harness, agent prompt,
agent sampling, judge model and prompt, simulated user, grader, environment, data) the record holds what
the official protocol uses and what this run used, each as a `Source`:

- `Value`: a setting given as a value (a model name, sampling settings, a task count and id hash);
- `Upstream`: upstream's own code or text, `repo@commit:path` with the sha256 of the text (and, for a
  setting read from that file, its value);
- `Ours`: forge-eval's own code or text, in words, with the sha256 of the text where it is one;
- `Unpinned`: the official protocol leaves the element open (any Chromium): whatever the run used fits;
- `NotUsed`: the element is not part of this protocol (no judge, no simulated user);
- `NotRecorded`: the official side is not known yet (a benchmark whose record is not filled).

Two sides are the same when their values are equal, else when their texts hash the same (see `same`).
`comparable` is true only when the record is filled (`pending` is None), every element kind appears at
least once, and every element is the same -- or differs in a way the benchmark declares `equivalent`
(with the reason: e.g. bubblewrap instead of Docker, which changes neither what the model sees nor how
it is scored). Benchmarks fill the record through `Benchmark.protocol(run)`.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from forge_eval._errors import ForgeError

#: Element kinds, in display order, with the words the report uses for them.
ELEMENTS: dict[str, str] = {
    "task_set": "task set and subset",
    "harness": "harness, version and configuration",
    "agent_prompt": "agent prompt",
    "agent_sampling": "agent sampling settings",
    "judge_model": "judge model",
    "judge_prompt": "judge prompt",
    "user_model": "simulated-user model",
    "grader": "grader code",
    "environment": "environment",
    "data": "data revision and checksum",
}
ElementKind = Literal[
    "task_set",
    "harness",
    "agent_prompt",
    "agent_sampling",
    "judge_model",
    "judge_prompt",
    "user_model",
    "grader",
    "environment",
    "data",
]


class _Model(BaseModel):
    # Frozen: `same` and `comparable` are derived once, from sides that cannot change afterwards. Unknown
    # fields are kept, so a newer forge-eval's additions survive an older report.
    model_config = ConfigDict(strict=True, extra="allow", frozen=True)


def sha256_text(text: str | bytes) -> str:
    """The sha256 (hex) of a text as UTF-8, or of bytes as they are."""
    return hashlib.sha256(text.encode("utf-8") if isinstance(text, str) else text).hexdigest()


def sha256_files(paths: Iterable[str | os.PathLike[str]]) -> str:
    """One sha256 over files and folders (recursively; caches skipped): each file's path relative to the
    folder given (its name for a file given directly) and its bytes, in a fixed order."""
    digest = hashlib.sha256()
    for given in paths:
        base = Path(given)
        files = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file())
        if not base.exists():
            raise ForgeError(f"cannot hash {base}: it does not exist")
        for file in files:
            if "__pycache__" in file.parts:
                continue
            name = file.name if file == base else file.relative_to(base).as_posix()
            digest.update(f"{name}\0{file.stat().st_size}\0".encode())
            digest.update(file.read_bytes())
    return digest.hexdigest()


class Value(_Model):
    """A setting given as a value: a model name, sampling settings, a count."""

    kind: Literal["value"] = "value"
    value: JsonValue
    label: str | None = None  # how the report shows it, when the raw value reads badly (not compared)


class Upstream(_Model):
    """Upstream's own code or text at a pinned commit (`repo@commit:path`), identified by its sha256.

    `symbol` names the function or constant in `path` when the element is what it builds (a prompt);
    `value` is a setting read from that file (e.g. `{"temperature": 0}` from its provider config).
    """

    kind: Literal["upstream"] = "upstream"
    repo: str
    commit: str
    path: str
    sha256: str
    symbol: str | None = None
    value: JsonValue = None

    @classmethod
    def file(
        cls,
        tree: str | os.PathLike[str],
        *,
        repo: str,
        commit: str,
        path: str,
        symbol: str | None = None,
        value: JsonValue = None,
    ) -> Upstream:
        """Upstream's file `path` in the pinned tree at `tree` (a checkout of `repo` at `commit`), hashed.

        Raises:
            ForgeError: the tree has no such file.
        """
        file = Path(tree) / path
        if not file.is_file():
            raise ForgeError(
                f"{repo}@{commit}: no file {path} under {tree}",
                "point --data-dir at the pinned upstream tree",
            )
        digest = sha256_text(file.read_bytes())
        return cls(repo=repo, commit=commit, path=path, sha256=digest, symbol=symbol, value=value)

    @classmethod
    def text(
        cls,
        text: str,
        *,
        repo: str,
        commit: str,
        path: str,
        symbol: str | None = None,
        value: JsonValue = None,
    ) -> Upstream:
        """A text upstream's code (`symbol` in `path`) built, e.g. the system prompt a run sent, hashed."""
        return cls(repo=repo, commit=commit, path=path, sha256=sha256_text(text), symbol=symbol, value=value)

    @property
    def ref(self) -> str:
        return f"{self.repo}@{self.commit}:{self.path}" + (f" ({self.symbol})" if self.symbol else "")


class Ours(_Model):
    """forge-eval's own code or text: what it is in words, and its sha256 where it is a text or files."""

    kind: Literal["ours"] = "ours"
    what: str
    sha256: str | None = None
    value: JsonValue = None

    @classmethod
    def text(cls, what: str, text: str) -> Ours:
        """Our own text (a prompt we wrote), hashed."""
        return cls(what=what, sha256=sha256_text(text))

    @classmethod
    def files(cls, what: str, *paths: str | os.PathLike[str]) -> Ours:
        """Our own code or data: the files and folders `paths`, hashed together (`sha256_files`)."""
        return cls(what=what, sha256=sha256_files(paths))


class Unpinned(_Model):
    """The official protocol leaves this element open: whatever the run used fits it."""

    kind: Literal["unpinned"] = "unpinned"
    what: str


class NotUsed(_Model):
    """The element is not part of this protocol (scored without a judge, no simulated user)."""

    kind: Literal["none"] = "none"
    why: str


class NotRecorded(_Model):
    """The official side is not known yet (the benchmark's record is not filled): never the same."""

    kind: Literal["unknown"] = "unknown"
    why: str


Source = Annotated[Value | Upstream | Ours | Unpinned | NotUsed | NotRecorded, Field(discriminator="kind")]


def same(official: Source, ours: Source) -> bool:
    """Whether a run's side of an element is the official one.

    An unpinned official side fits anything the run used; "not used" matches only "not used". Otherwise
    values are compared when both sides carry one, else texts by sha256 when both have one, else two
    `Ours` by what they are; an `Ours` never equals an `Upstream` unless their texts hash the same.
    """
    if isinstance(official, NotRecorded) or isinstance(ours, NotRecorded):
        return False
    if isinstance(official, Unpinned):
        return not isinstance(ours, NotUsed)
    if isinstance(official, NotUsed) or isinstance(ours, NotUsed):
        return isinstance(official, NotUsed) and isinstance(ours, NotUsed)
    value_a, value_b = _value(official), _value(ours)
    if value_a is not None and value_b is not None:
        return _canonical(value_a) == _canonical(value_b)
    hash_a, hash_b = getattr(official, "sha256", None), getattr(ours, "sha256", None)
    if hash_a and hash_b:
        return hash_a == hash_b
    if isinstance(official, Ours) and isinstance(ours, Ours):
        return official.what == ours.what
    return False


def _value(source: Source) -> JsonValue:
    return source.value if isinstance(source, Value | Upstream | Ours) else None


def _canonical(value: JsonValue) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def describe(source: Source) -> str:
    """One line for the report: what the side is and where it comes from."""
    if isinstance(source, Value):
        return source.label or _canonical(source.value)
    if isinstance(source, Upstream):
        shown = f"{source.ref}, sha256 {source.sha256[:12]}"
        return f"{_canonical(source.value)} from {shown}" if source.value is not None else shown
    if isinstance(source, Ours):
        parts = [f"ours: {source.what}"]
        if source.value is not None:
            parts.append(_canonical(source.value))
        if source.sha256:
            parts.append(f"sha256 {source.sha256[:12]}")
        return ", ".join(parts)
    if isinstance(source, Unpinned):
        return f"not fixed: {source.what}"
    if isinstance(source, NotRecorded):
        return f"not recorded: {source.why}"
    return f"not used: {source.why}"


class ProtocolElement(_Model):
    """One element of the protocol: the official side, this run's side, and whether they match.

    Attributes:
        element: The kind of element (`ELEMENTS`).
        name: What the report calls it (default: the kind's words); tells apart two elements of one
            kind, e.g. two judge prompts.
        official: What the official protocol uses.
        ours: What this run used.
        same: Computed from the two sides (`same()`); a file that says otherwise is refused.
        equivalent: Set when the sides differ in a way that changes neither what the model sees nor how
            it is scored: why (the element then counts as matching).
        note: Anything else a reader should know (shown in the report).
    """

    element: ElementKind
    name: str = ""
    official: Source
    ours: Source
    same: bool | None = None
    equivalent: str | None = None
    note: str | None = None

    @model_validator(mode="after")
    def _derive(self) -> ProtocolElement:
        computed = same(self.official, self.ours)
        if self.same is not None and self.same != computed:
            raise ValueError(
                f"protocol element {self.element!r} says same={self.same}, but official "
                f"({describe(self.official)}) and ours ({describe(self.ours)}) are "
                f"{'' if computed else 'not '}the same"
            )
        object.__setattr__(self, "same", computed)
        if not self.name:
            object.__setattr__(self, "name", ELEMENTS[self.element])
        return self

    @property
    def matches(self) -> bool:
        """Same, or declared equivalent."""
        return bool(self.same) or self.equivalent is not None


class ProtocolRecord(_Model):
    """The whole record: every element, whether the run is comparable, and if not, why.

    Attributes:
        elements: The elements, in the order the benchmark gave them.
        pending: Set while a benchmark's record is not filled yet: why (the run is then not comparable).
        comparable: Computed: filled, every element kind present, every element matching.
        reasons: Computed: why the run is not comparable, one line each (empty when it is).
    """

    elements: list[ProtocolElement] = Field(default_factory=list)
    pending: str | None = None
    comparable: bool | None = None
    reasons: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _derive(self) -> ProtocolRecord:
        reasons = [self.pending] if self.pending else []
        present = {e.element for e in self.elements}
        missing = [ELEMENTS[k] for k in ELEMENTS if k not in present]
        if missing and not self.pending:
            reasons.append(f"not recorded: {', '.join(missing)}")
        for e in self.elements:
            if self.pending and isinstance(e.official, NotRecorded):
                continue  # the pending reason says it already
            if not e.matches:
                reasons.append(
                    f"{e.name} differs: official {describe(e.official)}; this run {describe(e.ours)}"
                    + (f" ({e.note})" if e.note else "")
                )
        computed = not reasons
        if self.comparable is not None and self.comparable != computed:
            raise ValueError(
                f"protocol says comparable={self.comparable}, but its elements say {computed}"
                + (f": {'; '.join(reasons)}" if reasons else "")
            )
        object.__setattr__(self, "comparable", computed)
        object.__setattr__(self, "reasons", reasons)
        return self

    def of(self, kind: str) -> list[ProtocolElement]:
        """The elements of one kind."""
        return [e for e in self.elements if e.element == kind]


def element(
    kind: ElementKind,
    official: Source,
    ours: Source | None = None,
    *,
    name: str = "",
    equivalent: str | None = None,
    note: str | None = None,
) -> ProtocolElement:
    """One protocol element; `ours` defaults to `official` -- for a run that used exactly the official
    element (our own benchmarks, or upstream's text read from the pinned tree as it is)."""
    return ProtocolElement(
        element=kind,
        name=name,
        official=official,
        ours=official if ours is None else ours,
        equivalent=equivalent,
        note=note,
    )


def differences(a: ProtocolRecord | None, b: ProtocolRecord | None) -> list[str]:
    """How two runs' protocols differ (what each run used, element by element), one line each.

    A run without a record (written before records existed) is one difference; an element one run
    records and the other does not is one too.
    """
    if a is None or b is None:
        if a is None and b is None:
            return ["neither run has a protocol record (written by an older forge-eval)"]
        which = "baseline" if a is None else "run"
        return [f"the {which} has no protocol record (written by an older forge-eval)"]
    out = []
    names_a = {e.name: e for e in a.elements}
    names_b = {e.name: e for e in b.elements}
    for name in [*names_a, *(n for n in names_b if n not in names_a)]:
        ea, eb = names_a.get(name), names_b.get(name)
        if ea is None or eb is None:
            out.append(f"{name}: recorded only in the {'run' if ea is None else 'baseline'}")
        elif not same(ea.ours, eb.ours):
            out.append(f"{name}: baseline {describe(ea.ours)}; run {describe(eb.ours)}")
    if (a.pending is None) != (b.pending is None):
        out.append(f"record filled in the {'baseline' if a.pending is None else 'run'} only")
    return out
