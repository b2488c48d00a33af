"""Reading a harness's request body: content type, size limit, compression (Codex may send zstd), JSON."""

import json
import zlib
from typing import Any

import zstandard
from starlette.requests import Request

from forge_eval.training.proxy._canonical import BadRequest


def _limited(data: bytes, limit: int) -> bytes:
    if len(data) > limit:
        raise BadRequest(f"request body is larger than the limit of {limit} bytes", 413, "request_too_large")
    return data


def _decompress(raw: bytes, encoding: str, limit: int) -> bytes:
    try:
        if encoding == "zstd":
            with zstandard.ZstdDecompressor().stream_reader(raw) as reader:
                return _limited(reader.read(limit + 1), limit)
        if encoding in ("gzip", "deflate"):
            inflater = zlib.decompressobj(wbits=47)  # 32 + 15: gzip or zlib header, detected
            return _limited(inflater.decompress(raw, limit + 1), limit)
    except (zstandard.ZstdError, zlib.error) as e:
        raise BadRequest(f"request body is not valid {encoding}: {e}") from None
    raise BadRequest(f"unsupported Content-Encoding {encoding!r} (supported: zstd, gzip, deflate)", 415)


async def read_json(request: Request, limit: int) -> tuple[dict[str, Any], bytes]:
    """The JSON object of a request, and its raw (decompressed) bytes."""
    content_type = request.headers.get("content-type", "application/json").split(";")[0].strip().lower()
    if content_type != "application/json":
        raise BadRequest(f"Content-Type must be application/json, got {content_type!r}", 415)
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise BadRequest(f"request body is larger than the limit of {limit} bytes", 413, "request_too_large")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BadRequest(
                f"request body is larger than the limit of {limit} bytes", 413, "request_too_large"
            )
        chunks.append(chunk)
    raw = b"".join(chunks)
    encoding = request.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        raw = _decompress(raw, encoding, limit)
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise BadRequest(f"request body is not valid JSON: {e}") from None
    if not isinstance(body, dict):
        raise BadRequest(f"request body must be a JSON object, got {type(body).__name__}")
    return body, raw
