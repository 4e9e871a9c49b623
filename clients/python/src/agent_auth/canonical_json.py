"""RFC 8785 (JSON Canonicalization Scheme) serialization and the hashes the service computes over it.

Pure standard library, so the hashes can be checked without the ``verify`` extra.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any, Mapping, Optional

_MAX_SAFE_INTEGER = 2**53 - 1


def _number(value: float) -> str:
    """ECMAScript's Number.prototype.toString of a double, which RFC 8785 prescribes."""
    if not math.isfinite(value):
        raise ValueError("JSON has no NaN or Infinity")
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    # repr gives the shortest digits that round-trip, as ECMAScript does; only the layout differs.
    mantissa, _, exp_text = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + ("" if fraction == "0" else fraction)
    # value = 0.<digits> × 10^point once the leading zeros are gone.
    point = len(whole) + int(exp_text or 0)
    significant = digits.lstrip("0")
    point -= len(digits) - len(significant)
    digits = significant.rstrip("0")
    k = len(digits)
    if k <= point <= 21:
        text = digits + "0" * (point - k)
    elif 0 < point <= 21:
        text = digits[:point] + "." + digits[point:]
    elif -6 < point <= 0:
        text = "0." + "0" * -point + digits
    else:
        exponent = point - 1
        mark = "+" if exponent >= 0 else "-"
        head = digits[0] + ("." + digits[1:] if k > 1 else "")
        text = f"{head}e{mark}{abs(exponent)}"
    return sign + text


def canonical_json(value: Any) -> str:
    """The RFC 8785 canonical JSON text of a value: keys sorted by UTF-16 code units, no spaces, ECMAScript numbers."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value) if abs(value) <= _MAX_SAFE_INTEGER else _number(float(value))
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        keys = sorted(value, key=lambda key: str(key).encode("utf-16-be"))
        return "{" + ",".join(f"{json.dumps(str(k), ensure_ascii=False)}:{canonical_json(value[k])}" for k in keys) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(canonical_json(item) for item in value) + "]"
    raise TypeError(f"{type(value).__name__} is not JSON")


def canonical_sha256(value: Any) -> str:
    """Lowercase hex SHA-256 of the RFC 8785 canonical JSON of a value."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def request_hash_of(action: Mapping[str, Any]) -> str:
    """The ``request_hash`` of what a holder was shown (an action as the service returns it), to compare with the
    receipt's claim."""
    return canonical_sha256(
        {
            "action_type": action["action_type"],
            "title": action["title"],
            "description": action.get("description"),
            "risk_level": action["risk_level"],
            "reversible": action["reversible"],
            "amount_cents": action.get("amount_cents"),
            "currency": action["currency"],
            "recipient": action.get("recipient"),
            "metadata": action.get("metadata") or {},
        }
    )


def audit_event_hash(event: Mapping[str, Any]) -> str:
    """The hash an audit event must carry: SHA-256 of the canonical JSON of the event without its hash."""
    keys = ("seq", "at", "request_id", "type", "actor", "data", "prev_hash")
    return canonical_sha256({key: event.get(key) for key in keys})


def content_hash_of(
    service_name: str, method: str, url: str, headers: Optional[Mapping[str, str]], body: Optional[str]
) -> str:
    """The ``content_hash`` of a vault call: what the holder approves and the executor checks."""
    return canonical_sha256(
        {"service_name": service_name, "method": method.upper(), "url": url, "headers": dict(headers or {}), "body": body}
    )
