"""OpenAI-style chat messages, as upstream's code builds them, made Inspect's part for part.

The web judges and OSWorld's agent run upstream's own prompt builders (loaded by `forge_eval.upstream`);
what they build is sent to the Inspect model as it is, so the model gets what upstream's code built.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    Content,
    ContentImage,
    ContentText,
)

from forge_eval._errors import ForgeError


def to_inspect(
    messages: list[Mapping[str, Any]], image: Callable[[str, str], list[Content]] | None = None
) -> list[ChatMessage]:
    """OpenAI chat messages (as upstream builds them) as Inspect messages, part for part.

    Args:
        messages: `{"role", "content"}` dicts; content a string or text / image_url parts.
        image: How an image part is shown instead (url, detail) -> content, for judges that cannot see
            images; None: as the image itself, with upstream's `detail` (OpenAI's "auto" when unset).
    """
    out: list[ChatMessage] = []
    for message in messages:
        content = message["content"]
        if not isinstance(content, str):
            parts: list[Content] = []
            for part in content:
                if part["type"] == "text":
                    parts.append(ContentText(text=part["text"]))
                elif part["type"] == "image_url":
                    url, detail = part["image_url"]["url"], part["image_url"].get("detail", "auto")
                    parts += image(url, detail) if image else [ContentImage(image=url, detail=detail)]
                else:
                    raise ForgeError(f"upstream built a message part of unknown type {part['type']!r}")
            content = parts
        role = message["role"]
        if role == "system":
            out.append(ChatMessageSystem(content=content))
        elif role == "user":
            out.append(ChatMessageUser(content=content))
        elif role == "assistant":
            out.append(ChatMessageAssistant(content=content))
        else:
            raise ForgeError(f"upstream built a message with role {role!r}")
    return out
