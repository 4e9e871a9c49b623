"""The blocking transport: the standard library's urllib, JSON in and out, typed errors, bounded retries."""

from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

from ._calls import Call, RetryBudget
from .errors import ServiceUnreachableError, error_for, parse_body

USER_AGENT = "agent-auth-python/0.1.0"


@dataclass(frozen=True)
class Settings:
    """What every call of one client shares."""

    base_url: str
    api_key: str
    max_retries: int
    max_retry_delay: float
    timeout: float

    def url_of(self, call: Call) -> str:
        return call.url if call.url is not None else self.base_url + call.path

    def headers_of(self, call: Call) -> Dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if call.url is None:
            headers["X-API-Key"] = self.api_key
        if call.body is not None:
            headers["Content-Type"] = "application/json"
        headers.update(call.headers)
        return headers

    def timeout_of(self, call: Call) -> float:
        # A held read is answered after up to hold_seconds: the socket must outwait it.
        return self.timeout + call.hold_seconds


def encode_body(call: Call) -> Optional[bytes]:
    return None if call.body is None else json.dumps(call.body, separators=(",", ":")).encode("utf-8")


def check_settings(api_key: str, base_url: str) -> Tuple[str, str]:
    """The API key and the base URL without its trailing slashes; TypeError when either is missing."""
    if not api_key:
        raise TypeError("api_key is required")
    if not base_url or not base_url.startswith(("http://", "https://")):
        raise TypeError("base_url is required: the service's http(s) address ending in /api/v1")
    return api_key, base_url.rstrip("/")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    # The API never redirects; following one would resend the API key to wherever it points.
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_opener = urllib.request.build_opener(_NoRedirect)


def _exchange(settings: Settings, call: Call) -> Tuple[int, Optional[str], bytes]:
    """One attempt: (status, Retry-After, body). Raises OSError (or HTTPException) when no answer came."""
    request = urllib.request.Request(
        settings.url_of(call), data=encode_body(call), headers=settings.headers_of(call), method=call.method
    )
    try:
        with _opener.open(request, timeout=settings.timeout_of(call)) as response:
            return response.status, response.headers.get("Retry-After"), response.read()
    except urllib.error.HTTPError as answer:
        with answer:
            return answer.code, answer.headers.get("Retry-After"), answer.read()


def send(settings: Settings, call: Call) -> Any:
    """Sends one API call and returns its parsed JSON body, retrying 429s as Retry-After asks and transient failures
    of calls that may be repeated."""
    budget = RetryBudget(call, settings.max_retries, settings.max_retry_delay)
    while True:
        try:
            status, retry_after, raw = _exchange(settings, call)
        except (OSError, http.client.HTTPException, socket.timeout) as err:
            delay = budget.after_network_error()
            if delay is None:
                reason = getattr(err, "reason", err)
                raise ServiceUnreachableError(f"{call.method} {settings.url_of(call)}: {reason}") from err
            time.sleep(delay)
            continue
        if 200 <= status < 300:
            return parse_body(raw)
        delay = budget.after_status(status, retry_after)
        if delay is None:
            raise error_for(status, parse_body(raw), retry_after)
        time.sleep(delay)
