"""API adapters: each registers itself in `ADAPTERS` under its `Api` name."""

from forge_eval.proxy._adapters import anthropic, chat, completions, responses
from forge_eval.proxy._adapters._adapter import ADAPTERS, Adapter, ConversationStore
from forge_eval.proxy._adapters._openai import openai_error

__all__ = [
    "ADAPTERS",
    "Adapter",
    "ConversationStore",
    "anthropic",
    "chat",
    "completions",
    "openai_error",
    "responses",
]
