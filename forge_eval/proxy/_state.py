"""The proxy's shared state: settings, upstream, writer, rollouts, pause and policy version."""

import asyncio
from dataclasses import dataclass, field

from forge_eval.proxy._config import ProxyConfig
from forge_eval.proxy._rollouts import Rollouts
from forge_eval.proxy._upstream import ProxyUpstream
from forge_eval.proxy._writer import RecordWriter


@dataclass
class ProxyState:
    config: ProxyConfig
    upstream: ProxyUpstream
    writer: RecordWriter
    rollouts: Rollouts = field(default_factory=Rollouts)
    paused: bool = False
    policy_version: int | None = None
    in_flight: int = 0
    idle: asyncio.Event = field(default_factory=asyncio.Event)

    def call_started(self) -> None:
        self.in_flight += 1
        self.idle.clear()

    def call_ended(self) -> None:
        self.in_flight -= 1
        if self.in_flight == 0:
            self.idle.set()
