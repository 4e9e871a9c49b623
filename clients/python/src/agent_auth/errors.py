"""One exception class per status of the service's error catalogue (docs/errors.md), so an agent can write
``except RateLimitedError`` instead of comparing numbers; each carries the service's ``code`` and ``detail``."""

from __future__ import annotations

import email.utils
import json
import math
import time
from typing import TYPE_CHECKING, Any, Dict, Optional, Type

if TYPE_CHECKING:
    from .types import Action


class AgentAuthError(Exception):
    """Any non-2xx answer of the service.

    Attributes:
        status: the HTTP status.
        code: the catalogue's stable machine-readable code (``invalid_request``, ``action_not_pending``, …); branch
            on it. ``None`` only when the answer did not come from the service (a proxy's error page).
        detail: the service's description, naming the field or the condition; show or log it.
        body: the parsed answer body (a dict), or its text when it was not JSON.
    """

    def __init__(self, status: int, code: Optional[str], detail: str, body: Any = None) -> None:
        super().__init__(f"{status} {code or 'error'}: {detail}")
        self.status = status
        self.code = code
        self.detail = detail
        self.body = body


class ValidationError(AgentAuthError):
    """400: a missing or invalid field, or malformed JSON; the detail names the field."""


class UnauthorizedError(AgentAuthError):
    """401: missing or invalid API key."""


class QuotaExceededError(AgentAuthError):
    """402: the account's monthly action quota is used up."""


class ForbiddenError(AgentAuthError):
    """403: content hash mismatch, host not allowed, a request not approved, and similar refusals."""


class NotFoundError(AgentAuthError):
    """404: the request (or credential) does not exist or is not this agent's."""


class ConflictError(AgentAuthError):
    """409: the request is already resolved or already executed."""


class UpstreamError(AgentAuthError):
    """502: the upstream API failed during a vault execution."""


class RateLimitedError(AgentAuthError):
    """429: too many requests, after the client's own retries ran out.

    Attributes:
        retry_after_seconds: seconds the service asked to wait (``Retry-After``), or ``None`` when it gave none.
    """

    def __init__(
        self, status: int, code: Optional[str], detail: str, body: Any, retry_after_seconds: Optional[float]
    ) -> None:
        super().__init__(status, code, detail, body)
        self.retry_after_seconds = retry_after_seconds


class ServiceUnreachableError(ConnectionError):
    """The service could not be reached (connection refused or reset, a time-out), after the client's retries."""


class WaitTimeoutError(TimeoutError):
    """``wait_for_result`` gave up before the request was resolved; the request itself is still pending.

    Attributes:
        action: the request as last read.
        timeout: the time-out that passed, in seconds.
    """

    def __init__(self, action: Action, timeout: float) -> None:
        super().__init__(f"Action request '{action['id']}' still {action['status']} after {timeout:g} s")
        self.action = action
        self.timeout = timeout


class ApprovalDeniedError(Exception):
    """A call wrapped by ``requires_approval`` was not approved: denied, expired or withdrawn; it did not run.

    Attributes:
        action: the request in its final state.
        status: ``denied``, ``expired`` or ``cancelled``.
        reason: the reason the holder gave with a denial, or ``None``.
    """

    def __init__(self, action: Action) -> None:
        self.action = action
        self.status: str = action["status"]
        self.reason: Optional[str] = action.get("reason")
        super().__init__(rejection_message(self.status, self.reason))


class VerificationError(Exception):
    """A receipt or audit chain that does not verify; ``seq`` names the first broken event of a chain."""

    def __init__(self, message: str, seq: Optional[int] = None) -> None:
        super().__init__(message)
        self.seq = seq


class MissingDependencyError(ImportError):
    """An optional feature whose extra is not installed (receipt verification needs ``cryptography``)."""


def rejection_message(status: str, reason: Optional[str]) -> str:
    """The text a framework hands the model for a call that was not approved: why it did not run."""
    if status == "expired":
        return "Not approved: the approval request expired before anyone answered."
    if status == "cancelled":
        return "Not approved: the approval request was withdrawn."
    return f"Denied by the approver: {reason}" if reason else "Denied by the approver."


_BY_STATUS: Dict[int, Type[AgentAuthError]] = {
    400: ValidationError,
    401: UnauthorizedError,
    402: QuotaExceededError,
    403: ForbiddenError,
    404: NotFoundError,
    409: ConflictError,
    502: UpstreamError,
}


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """Seconds of a ``Retry-After`` header: the service sends whole seconds, but an HTTP date is accepted too."""
    if not value:
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        return max(0.0, math.ceil(when.timestamp() - (time.time() if now is None else now)))
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def parse_body(raw: bytes) -> Any:
    """An answer's body: parsed JSON, or its text when it is not JSON, or None when empty."""
    if not raw:
        return None
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


def error_for(status: int, body: Any, retry_after: Optional[str]) -> AgentAuthError:
    """The typed exception for a non-2xx answer."""
    code: Optional[str] = None
    if isinstance(body, dict) and isinstance(body.get("detail"), str):
        detail: str = body["detail"]
        code = body["code"] if isinstance(body.get("code"), str) else None
    elif isinstance(body, str) and body:
        detail = body[:500]
    else:
        detail = f"HTTP {status}"
    if status == 429:
        return RateLimitedError(status, code, detail, body, parse_retry_after(retry_after))
    return _BY_STATUS.get(status, AgentAuthError)(status, code, detail, body)
