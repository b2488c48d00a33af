"""Named registries (benchmarks, harnesses, models, credit variants, rollout backends).

A registry replaces if-chains: code registers an object under a name with a decorator, and
lookups of unknown names raise `UnknownNameError` listing the valid ones.
"""

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from forge_eval._errors import UnknownNameError

T = TypeVar("T")


class Registry(Generic[T]):
    """A mapping from names to objects of one kind.

    Args:
        kind: What the registry holds, singular ("benchmark"), used in error messages.
        loader: Called once before the first lookup, to import the modules that register
            entries (keeps `import forge_eval` cheap and free of import cycles).
    """

    def __init__(self, kind: str, loader: Callable[[], None] | None = None) -> None:
        self.kind = kind
        self._entries: dict[str, T] = {}
        self._loader = loader
        self._loaded = loader is None

    def register(self, name: str, obj: T | None = None) -> Callable[[T], T] | T:
        """Register `obj` under `name`, or return a decorator that does."""

        def add(value: T) -> T:
            if name in self._entries and self._entries[name] is not value:
                raise ValueError(f"{self.kind} '{name}' is already registered")
            self._entries[name] = value
            return value

        return add if obj is None else add(obj)

    def _ensure_loaded(self) -> None:
        if not self._loaded:
            self._loaded = True
            assert self._loader is not None
            self._loader()

    def get(self, name: str) -> T:
        """Look up `name`; unknown names raise `UnknownNameError` with the valid names."""
        self._ensure_loaded()
        try:
            return self._entries[name]
        except KeyError:
            raise UnknownNameError(self.kind, name, list(self._entries)) from None

    def names(self) -> list[str]:
        self._ensure_loaded()
        return sorted(self._entries)

    def items(self) -> Iterator[tuple[str, T]]:
        self._ensure_loaded()
        yield from sorted(self._entries.items())

    def __contains__(self, name: object) -> bool:
        self._ensure_loaded()
        return name in self._entries
