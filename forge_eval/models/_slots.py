"""Which llama.cpp slot a chat request goes to: the one that holds its conversation's history.

llama.cpp keeps each slot's last prompt in its KV cache and reuses the longest common prefix, but it
picks the slot by token similarity among the idle ones. A run's seeds ask the same tasks at the same
time, so two conversations share their whole first prompt (system, tools, task): they took each
other's slots, and `make run`'s later calls re-read about twice as many prompt tokens as were new
(the llama.cpp timings in its Inspect logs). Here a conversation is recognized by its messages: a
request whose leading messages are exactly what a slot last served (and more) continues that
conversation there; anything else starts in the least recently used idle slot. llama.cpp's own
choice remains where every slot is busy. Written here because the server only offers `id_slot`.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from typing import Any


def _prefix_digests(messages: list[Any]) -> list[str]:
    """digests[i] identifies messages[: i + 1] (a chain, so each costs one message's hash)."""
    digests, running = [], hashlib.sha256()
    for message in messages:
        running.update(json.dumps(message, sort_keys=True, separators=(",", ":")).encode())
        running.update(b"\x00")
        digests.append(running.copy().hexdigest())
    return digests


@dataclass
class _Slot:
    n_messages: int = 0
    digest: str = ""
    busy: bool = False
    last_used: int = 0


class SlotRouter:
    """Chooses `id_slot` for each request among `n_slots`; thread-safe (requests run in threads)."""

    def __init__(self, n_slots: int) -> None:
        self._slots = [_Slot() for _ in range(n_slots)]
        self._lock = threading.Lock()
        self._clock = 0

    def acquire(self, messages: list[Any]) -> int | None:
        """The slot for a request with these messages, now marked busy; None when all are busy."""
        digests = _prefix_digests(messages)
        with self._lock:
            idle = [i for i, slot in enumerate(self._slots) if not slot.busy]
            if not idle:
                return None
            # strictly longer: two seeds' first calls of one task are equal, and must not share a slot
            continuing = [
                i
                for i in idle
                if 0 < self._slots[i].n_messages < len(messages)
                and digests[self._slots[i].n_messages - 1] == self._slots[i].digest
            ]
            if continuing:
                chosen = max(continuing, key=lambda i: self._slots[i].n_messages)
            else:
                chosen = min(idle, key=lambda i: self._slots[i].last_used)
            slot = self._slots[chosen]
            slot.busy = True
            slot.n_messages, slot.digest = len(messages), digests[-1] if digests else ""
            return chosen

    def release(self, index: int) -> None:
        with self._lock:
            self._clock += 1
            self._slots[index].busy = False
            self._slots[index].last_used = self._clock
