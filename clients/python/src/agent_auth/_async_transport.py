"""The asyncio transport: a small HTTP/1.1 client on asyncio streams, one connection per call.

It is written here rather than running urllib in threads (``asyncio.to_thread``) for two reasons: a held read
(``?wait=50``) would occupy one of the default executor's few threads for up to a minute, so a handful of agents
waiting at once would stall every other ``to_thread`` call of the program; and cancelling a task must close its
connection at once, which a thread blocked in a socket read cannot do. The service answers every call with a
Content-Length or a chunked body, which is all this client reads. HTTP proxies (``HTTPS_PROXY``) are not used.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Any, Dict, Optional, Tuple
from urllib.parse import urlsplit

from ._calls import Call, RetryBudget
from ._transport import Settings, encode_body
from .errors import ServiceUnreachableError, error_for, parse_body

_MAX_HEADER_LINES = 200


class _BrokenAnswer(Exception):
    """The server's bytes are not an HTTP/1.1 answer."""


def _request_bytes(method: str, target: str, host: str, headers: Dict[str, str], body: Optional[bytes]) -> bytes:
    lines = [f"{method} {target} HTTP/1.1", f"Host: {host}", "Connection: close", "Accept-Encoding: identity"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    if body is not None or method in ("POST", "PUT", "PATCH"):
        lines.append(f"Content-Length: {len(body or b'')}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b"")


async def _read_head(reader: asyncio.StreamReader) -> Tuple[int, Dict[str, str]]:
    status_line = (await reader.readline()).decode("latin-1")
    parts = status_line.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise _BrokenAnswer(f"not an HTTP/1.1 status line: {status_line.strip()!r}")
    headers: Dict[str, str] = {}
    for _ in range(_MAX_HEADER_LINES):
        line = (await reader.readline()).decode("latin-1").rstrip("\r\n")
        if not line:
            return int(parts[1]), headers
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    raise _BrokenAnswer("too many header lines")


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    body = bytearray()
    while True:
        size_line = (await reader.readline()).decode("latin-1").split(";", 1)[0].strip()
        try:
            size = int(size_line, 16)
        except ValueError:
            raise _BrokenAnswer(f"bad chunk size {size_line!r}") from None
        if size == 0:
            # Trailers, if any, end with an empty line.
            while (await reader.readline()).strip():
                pass
            return bytes(body)
        body += await reader.readexactly(size)
        await reader.readexactly(2)


async def _read_body(reader: asyncio.StreamReader, method: str, status: int, headers: Dict[str, str]) -> bytes:
    if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
        return b""
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return await _read_chunked(reader)
    if "content-length" in headers:
        length = headers["content-length"]
        if not length.isdigit():
            raise _BrokenAnswer(f"bad Content-Length {length!r}")
        return await reader.readexactly(int(length))
    return await reader.read()


async def _exchange(settings: Settings, call: Call) -> Tuple[int, Optional[str], bytes]:
    body = encode_body(call)
    url = urlsplit(settings.url_of(call))
    secure = url.scheme == "https"
    host = url.hostname or ""
    port = url.port or (443 if secure else 80)
    target = (url.path or "/") + (f"?{url.query}" if url.query else "")
    reader, writer = await asyncio.open_connection(
        host, port, ssl=ssl.create_default_context() if secure else None, server_hostname=host if secure else None
    )
    try:
        writer.write(_request_bytes(call.method, target, url.netloc, settings.headers_of(call), body))
        await writer.drain()
        status, headers = await _read_head(reader)
        return status, headers.get("retry-after"), await _read_body(reader, call.method, status, headers)
    finally:
        writer.close()
        try:
            await writer.wait_closed()
        except (OSError, ssl.SSLError):
            pass


async def send(settings: Settings, call: Call) -> Any:
    """Sends one API call and returns its parsed JSON body, with the same retries as the blocking transport."""
    budget = RetryBudget(call, settings.max_retries, settings.max_retry_delay)
    while True:
        try:
            status, retry_after, raw = await asyncio.wait_for(_exchange(settings, call), settings.timeout_of(call))
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, _BrokenAnswer) as err:
            delay = budget.after_network_error()
            if delay is None:
                raise ServiceUnreachableError(f"{call.method} {settings.url_of(call)}: {err!r}") from err
            await asyncio.sleep(delay)
            continue
        if 200 <= status < 300:
            return parse_body(raw)
        delay = budget.after_status(status, retry_after)
        if delay is None:
            raise error_for(status, parse_body(raw), retry_after)
        await asyncio.sleep(delay)
