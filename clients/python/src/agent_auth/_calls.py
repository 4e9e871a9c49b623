"""What each operation sends, and when a failed attempt is tried again: pure functions shared by ``Client`` and
``AsyncClient``, which differ only in how they move bytes and sleep."""

from __future__ import annotations

import math
import random
import re
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Mapping, Optional
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

from .errors import parse_retry_after

#: Longest single held read the service allows (GET /actions/{id}?wait=S).
MAX_HOLD_SECONDS = 60
DEFAULT_HOLD_SECONDS = 50
#: Between status reads when the service cannot hold a wait (docs/api-guide.md, Learning the outcome).
DEFAULT_POLL_INTERVAL = 2.0
TITLE_MAX = 200
_TRANSIENT = frozenset({502, 503, 504})


@dataclass(frozen=True)
class Call:
    """One API call: method, path under the base URL, JSON body (None: no body), extra headers.

    ``retry_transient``: retry 502/503/504 and network errors with backoff; for reads, and for a create carrying an
    Idempotency-Key (a retry then gets the first answer, never a second request). ``hold_seconds``: how long the
    service may hold the answer, added to the socket time-out.
    """

    method: str
    path: str
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    retry_transient: Optional[bool] = None
    hold_seconds: int = 0
    #: An absolute URL instead of base URL + path, sent without the API key (the JWKS at the host root).
    url: Optional[str] = None

    @property
    def retries_transient(self) -> bool:
        return self.method == "GET" if self.retry_transient is None else self.retry_transient


def _id(value: str) -> str:
    if not isinstance(value, str) or not value:
        raise TypeError("a request id (act_…) is required")
    return quote(value, safe="")


def present(fields: Mapping[str, Any]) -> Dict[str, Any]:
    """The fields that were given: None stands for "not given", as on the wire."""
    return {key: value for key, value in fields.items() if value is not None}


def create_action(fields: Mapping[str, Any], idempotency_key: Optional[str] = None) -> Call:
    """POST /actions with an Idempotency-Key (a fresh UUID unless given), so retrying it can never create twice."""
    key = idempotency_key if idempotency_key is not None else str(uuid.uuid4())
    return Call("POST", "/actions", present(fields), {"Idempotency-Key": key}, retry_transient=True)


def get_action(request_id: str, wait: Optional[int] = None) -> Call:
    if wait is None:
        return Call("GET", f"/actions/{_id(request_id)}")
    return Call("GET", f"/actions/{_id(request_id)}?wait={wait}", hold_seconds=wait)


def cancel_action(request_id: str) -> Call:
    # Cancelling is idempotent on the service's side (a cancelled request answers again), so retries are safe.
    return Call("POST", f"/actions/{_id(request_id)}/cancel", {}, retry_transient=True)


def list_actions(
    limit: Optional[int], status: Optional[str], action_type: Optional[str], cursor: Optional[str]
) -> Call:
    query = present({"limit": limit, "status": status, "action_type": action_type, "cursor": cursor})
    return Call("GET", "/actions" + (f"?{urlencode(query)}" if query else ""))


def spending_summary() -> Call:
    return Call("GET", "/agent/spending-summary")


def vault_services() -> Call:
    return Call("GET", "/vault/services")


def execute_approved(request_id: str) -> Call:
    # Never retried: a call that reached the upstream is used up, and the upstream may not be idempotent.
    return Call("POST", f"/vault/execute/{_id(request_id)}")


def jwks(base_url: str) -> Call:
    """GET /.well-known/jwks.json at the host root (beside the /api/v1 prefix), without credentials."""
    parts = urlsplit(base_url)
    path = parts.path[: -len("/api/v1")] if parts.path.endswith("/api/v1") else parts.path
    return Call("GET", "", url=urlunsplit((parts.scheme, parts.netloc, f"{path}/.well-known/jwks.json", "", "")))


def api_call_fields(
    *,
    service_name: str,
    method: str,
    url: str,
    headers: Optional[Mapping[str, str]],
    body: Optional[str],
    title: Optional[str],
    description: Optional[str],
    risk_level: Optional[str],
    expires_in_seconds: Optional[int],
) -> Dict[str, Any]:
    """The creation fields of a vault execution request: action_type system, the call in its metadata."""
    upper = method.upper()
    metadata: Dict[str, Any] = {"vault_execute": True, "service_name": service_name, "method": upper, "url": url}
    if headers is not None:
        metadata["headers"] = dict(headers)
    if body is not None:
        metadata["body"] = body
    return {
        "action_type": "system",
        "title": (title or f"{upper} {url} via {service_name}")[:TITLE_MAX],
        "description": description,
        "risk_level": risk_level,
        "expires_in_seconds": expires_in_seconds,
        "metadata": metadata,
    }


def payment_fields(
    *,
    amount: float,
    merchant: str,
    description: Optional[str],
    currency: Optional[str],
    metadata: Optional[Mapping[str, Any]],
    expires_in_seconds: Optional[int],
    callback_url: Optional[str],
) -> Dict[str, Any]:
    """The creation fields of a payment: a purchase, paid to the merchant, not undoable by the agent."""
    code = (currency or "USD").upper()
    return {
        "action_type": "purchase",
        "title": f"Pay {merchant} {amount:.2f} {code}"[:TITLE_MAX],
        "description": description,
        "amount": amount,
        "currency": code,
        "recipient": merchant,
        "metadata": dict(metadata) if metadata is not None else None,
        "expires_in_seconds": expires_in_seconds,
        "callback_url": callback_url,
        "reversible": False,
    }


def clamp_hold(hold_seconds: float) -> int:
    """A held read's length in whole seconds, 1 to 60."""
    return int(min(MAX_HOLD_SECONDS, max(1, int(hold_seconds))))


def transient_delay(n: int) -> float:
    """Backoff before retry n (0-based) of a transient failure: 250 ms doubling, ±50 % jitter so retries spread."""
    return 0.25 * float(2**n) * (0.5 + random.random())


class RetryBudget:
    """Decides, attempt by attempt, whether a failed call is tried again and after how long."""

    def __init__(self, call: Call, max_retries: int, max_retry_delay: float) -> None:
        self._transient = call.retries_transient
        self._max_retries = max_retries
        self._max_delay = max_retry_delay
        self._transient_used = 0
        self._limited_used = 0

    def after_network_error(self) -> Optional[float]:
        """Delay before retrying after a connection failure, or None to give up (the request may have arrived)."""
        if not self._transient or self._transient_used >= self._max_retries:
            return None
        delay = transient_delay(self._transient_used)
        self._transient_used += 1
        return delay

    def after_status(self, status: int, retry_after: Optional[str]) -> Optional[float]:
        """Delay before retrying after this status, or None when the answer stands."""
        if status in _TRANSIENT and self._transient:
            return self.after_network_error()
        if status == 429 and self._limited_used < self._max_retries:
            # Without a Retry-After, back off exponentially from one second.
            seconds = parse_retry_after(retry_after)
            delay = seconds if seconds is not None else float(2**self._limited_used)
            self._limited_used += 1
            return min(delay, self._max_delay)
        return None


class WaitPlan:
    """The timing of one ``wait_for_result``: held reads while the deadline allows, polling otherwise."""

    def __init__(
        self,
        timeout: Optional[float],
        hold_seconds: float,
        poll_interval: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._clock = clock
        self._deadline = math.inf if timeout is None else clock() + timeout
        self._hold = clamp_hold(hold_seconds)
        self._interval = poll_interval

    def left(self) -> float:
        """Seconds until the deadline (infinite without a time-out)."""
        return self._deadline - self._clock()

    def hold_for(self, holds_waits: bool) -> int:
        """Seconds of the next held read, never past the deadline; 0 for a plain read after a pause instead."""
        left = self.left()
        hold = self._hold if math.isinf(left) else min(self._hold, math.floor(left))
        return hold if holds_waits and hold >= 1 else 0

    def pause(self) -> float:
        """Seconds to sleep before the next plain read: the interval, but never past the deadline."""
        return max(0.0, min(self._interval, self.left()))

    def answered_at_once(self, action: Mapping[str, Any], asked_at: float, hold: int) -> bool:
        """A held read answered pending well before its time: a service that ignores ``wait``; keep to the interval."""
        return action.get("status") == "pending" and self._clock() - asked_at < hold * 0.5

    def now(self) -> float:
        return self._clock()


def refuses_wait(err: Exception) -> bool:
    """A 400 naming ``wait``: a service without held reads (an older one); the client polls from then on."""
    return getattr(err, "status", None) == 400 and re.search(r"\bwait\b", str(getattr(err, "detail", ""))) is not None
