"""Verifying what the service signed, without trusting it: receipts and an account's audit chain.

Signatures are ES256 (ECDSA P-256 with SHA-256) JWS, checked against the service's JSON Web Key Set
(``/.well-known/jwks.json``, live or saved). The signature check needs the ``cryptography`` package, the ``verify``
extra: ``pip install agent-auth[verify]``. The hashes need nothing beyond the standard library.
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, cast

from .canonical_json import audit_event_hash
from .errors import MissingDependencyError, VerificationError
from .types import AuditCheckpoint, AuditEvent, AuditHead, ReceiptClaims, VerifiedChain

RECEIPT_TYP = "aa-receipt+jwt"
AUDIT_HEAD_TYP = "aa-audit-head+jws"
AUDIT_CHECKPOINT_TYP = "aa-audit-checkpoint+jws"
_ZERO_HASH = "0" * 64
_EXTRA = "pip install agent-auth[verify]"


def _b64url(text: str) -> bytes:
    if not isinstance(text, str) or "=" in text or "+" in text or "/" in text:
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _typ(value: Any) -> str:
    # JOSE compares media types case-insensitively and without their "application/" prefix.
    text = str(value).lower()
    return text[len("application/") :] if text.startswith("application/") else text


def _ecdsa_backend() -> Any:
    try:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
    except ImportError as err:
        raise MissingDependencyError(
            f"verifying signatures needs the 'cryptography' package, the verify extra: {_EXTRA}"
        ) from err
    return InvalidSignature, hashes, ec, encode_dss_signature


def _candidate_keys(jwks: Mapping[str, Any], header: Mapping[str, Any]) -> List[Mapping[str, Any]]:
    """The P-256 signing keys of the set that the header may name: its ``kid`` when it has one."""
    keys = jwks.get("keys") if isinstance(jwks, Mapping) else None
    if not isinstance(keys, list):
        raise VerificationError("the key set has no 'keys' list")
    kid = header.get("kid")
    found = []
    for key in keys:
        if not isinstance(key, Mapping) or key.get("kty") != "EC" or key.get("crv") != "P-256":
            continue
        if kid is not None and key.get("kid") != kid:
            continue
        if key.get("alg", "ES256") != "ES256" or key.get("use", "sig") != "sig":
            continue
        if "key_ops" in key and "verify" not in key["key_ops"]:
            continue
        found.append(key)
    if not found:
        raise VerificationError(f"no key of the set matches the signature's kid {kid!r}")
    return found


def _signature_verifies(key: Mapping[str, Any], signing_input: bytes, signature: bytes) -> bool:
    invalid_signature, hashes, ec, encode_dss_signature = _ecdsa_backend()
    try:
        x, y = _b64url(key["x"]), _b64url(key["y"])
    except (KeyError, ValueError, binascii.Error):
        return False
    if len(x) != 32 or len(y) != 32 or len(signature) != 64:
        return False
    try:
        numbers = ec.EllipticCurvePublicNumbers(int.from_bytes(x, "big"), int.from_bytes(y, "big"), ec.SECP256R1())
        public_key = numbers.public_key()
    except ValueError:  # not a point of the curve
        return False
    der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
    try:
        public_key.verify(der, signing_input, ec.ECDSA(hashes.SHA256()))
    except invalid_signature:
        return False
    return True


def verify_jws(token: str, jwks: Mapping[str, Any], typ: str) -> Tuple[Dict[str, Any], bytes]:
    """Checks a compact ES256 JWS against a key set and returns (protected header, payload bytes).

    The header must say ``alg: ES256`` and the given ``typ``, name no critical extension, and the signature must
    verify with a P-256 key of the set (the one its ``kid`` names). Raises ``VerificationError`` otherwise.
    """
    parts = token.strip().split(".") if isinstance(token, str) else []
    if len(parts) != 3:
        raise VerificationError("not a compact JWS (three base64url parts)")
    try:
        header = json.loads(_b64url(parts[0]))
        payload = _b64url(parts[1])
        signature = _b64url(parts[2])
    except (ValueError, binascii.Error) as err:
        raise VerificationError(f"not a compact JWS: {err}") from None
    if not isinstance(header, dict):
        raise VerificationError("the JWS header is not a JSON object")
    if header.get("alg") != "ES256":
        raise VerificationError(f"alg is {header.get('alg')!r}, not ES256")
    if "crit" in header or header.get("b64") is False:
        raise VerificationError("the JWS names extensions this verifier does not support")
    if "typ" not in header or _typ(header["typ"]) != _typ(typ):
        raise VerificationError(f"typ is {header.get('typ')!r}, not {typ}")
    signing_input = f"{parts[0]}.{parts[1]}".encode("ascii")
    if not any(_signature_verifies(key, signing_input, signature) for key in _candidate_keys(jwks, header)):
        raise VerificationError("the signature does not verify")
    return header, payload


def _check_time_claims(claims: Mapping[str, Any], now: float) -> None:
    for name in ("iat", "exp", "nbf"):
        if name in claims and (isinstance(claims[name], bool) or not isinstance(claims[name], (int, float))):
            raise VerificationError(f"the {name} claim is not a number")
    if "exp" in claims and claims["exp"] <= now:
        raise VerificationError("the receipt has expired (exp)")
    if "nbf" in claims and claims["nbf"] > now:
        raise VerificationError("the receipt is not valid yet (nbf)")


def verify_receipt(
    receipt: str, jwks: Mapping[str, Any], *, issuer: Optional[str] = None, now: Optional[float] = None
) -> ReceiptClaims:
    """Verifies a receipt (compact JWS) against the service's JSON Web Key Set and returns its claims.

    Checks: ES256, header ``typ: aa-receipt+jwt``, the signature by a key of the set, claims a JSON object with
    numeric ``iat``/``exp``/``nbf`` where present (and not expired or premature), and ``iss`` when ``issuer`` is
    given. Raises ``VerificationError`` when any check fails, and ``MissingDependencyError`` (an ImportError)
    naming ``pip install agent-auth[verify]`` when ``cryptography`` is not installed.

    The claims say what was resolved: compare ``claims["request_hash"]`` with ``request_hash_of(action)`` to tie
    the receipt to the request the holder was shown.
    """
    _ecdsa_backend()
    _, payload = verify_jws(receipt, jwks, RECEIPT_TYP)
    try:
        claims = json.loads(payload)
    except ValueError:
        raise VerificationError("the receipt's claims are not JSON") from None
    if not isinstance(claims, dict):
        raise VerificationError("the receipt's claims are not a JSON object")
    _check_time_claims(claims, time.time() if now is None else now)
    if issuer is not None and claims.get("iss") != issuer:
        raise VerificationError(f"iss is {claims.get('iss')!r}, not {issuer!r}")
    return cast(ReceiptClaims, claims)


def _verify_signed(item: Mapping[str, Any], jwks: Mapping[str, Any], typ: str, what: str) -> Dict[str, Any]:
    """Checks a signed head or checkpoint: its signature (``typ``), and that its fields are the ones signed."""
    try:
        _, payload = verify_jws(item["signature"], jwks, typ)
        signed = json.loads(payload)
    except (VerificationError, ValueError, KeyError) as err:
        raise VerificationError(f"the {what}'s signature does not verify: {err}") from None
    if not isinstance(signed, dict) or any(signed.get(k) != item.get(k) for k in ("seq", "hash", "at")):
        raise VerificationError(f"the {what} differs from what its signature covers")
    return signed


def _verify_head(head: AuditHead, jwks: Mapping[str, Any]) -> Dict[str, Any]:
    """Checks the head's signature and that its fields are the ones signed; returns the signed content."""
    return _verify_signed(head, jwks, AUDIT_HEAD_TYP, "audit head")


def _verify_checkpoint(checkpoint: AuditCheckpoint, account_id: str, jwks: Mapping[str, Any]) -> Dict[str, Any]:
    """Checks a checkpoint's signature, that it was signed for ``account_id``, and that its fields are the ones signed."""
    signed = _verify_signed(checkpoint, jwks, AUDIT_CHECKPOINT_TYP, "audit checkpoint")
    if signed.get("account_id") != account_id:
        raise VerificationError(f"the checkpoint was signed for account {signed.get('account_id')}, not {account_id}")
    return signed


def _check_head_against_cut(signed: Mapping[str, Any], cut: Mapping[str, Any]) -> None:
    """A head at the cut must carry the checkpoint's hash; one before it cannot be checked at all."""
    if signed["seq"] < cut["seq"]:
        raise VerificationError(
            f"the signed head at event {signed['seq']} lies before the checkpoint at event {cut['seq']}: "
            "nothing before it can be checked",
            signed["seq"],
        )
    if signed["seq"] == cut["seq"] and signed["hash"] != cut["hash"]:
        raise VerificationError(f"the signed head at event {signed['seq']} differs from the checkpoint there", signed["seq"])


def verify_audit_chain(
    events: Sequence[AuditEvent],
    head: AuditHead,
    jwks: Mapping[str, Any],
    *,
    checkpoint: Optional[AuditCheckpoint] = None,
) -> VerifiedChain:
    """Verifies an account's exported audit chain against its signed head.

    Checks the head's signature (a receipt key of the set), each event's hash, each ``prev_hash`` linking to the
    event before (64 zeros before seq 1), seqs consecutive, and the event at the head's seq carrying the head's
    hash. ``events`` may start after seq 1 (a later page) but must then be consecutive. Where retention cut the
    chain, pass the ``checkpoint`` its first page carried (``GET /audit``'s ``checkpoint``): it must be signed for
    the head's account, the events must start right after it with its hash as their ``prev_hash``, and a head at the
    checkpoint must carry its hash (one before it cannot be checked). Raises ``VerificationError`` naming the first
    broken event (its ``seq``).
    """
    _ecdsa_backend()
    signed = _verify_head(head, jwks)
    cut = _verify_checkpoint(checkpoint, signed["account_id"], jwks) if checkpoint is not None else None
    ordered = sorted(events, key=lambda event: event["seq"])
    previous: Optional[AuditEvent] = None
    for event in ordered:
        seq = event["seq"]
        if cut is not None and seq <= cut["seq"]:
            raise VerificationError(f"event {seq} lies before the checkpoint at event {cut['seq']}", seq)
        expected_seq = previous["seq"] + 1 if previous is not None else cut["seq"] + 1 if cut is not None else None
        if expected_seq is not None and seq != expected_seq:
            raise VerificationError(
                f"event {expected_seq} is missing (the export jumps from {expected_seq - 1} to {seq})", expected_seq
            )
        if previous is not None:
            expected_prev: Optional[str] = previous["hash"]
        elif cut is not None:
            expected_prev = cut["hash"]
        else:
            expected_prev = _ZERO_HASH if seq == 1 else None
        if expected_prev is not None and event["prev_hash"] != expected_prev:
            raise VerificationError(f"event {seq}: prev_hash does not match the hash of event {seq - 1}", seq)
        if audit_event_hash(event) != event["hash"]:
            raise VerificationError(f"event {seq}: its content does not match its hash", seq)
        if seq == signed["seq"] and (event["hash"] != signed["hash"] or event["at"] != signed["at"]):
            raise VerificationError(f"event {seq}: differs from the signed head", seq)
        previous = event
    first = ordered[0]["seq"] if ordered else cut["seq"] + 1 if cut is not None else 1
    last = previous["seq"] if previous is not None else cut["seq"] if cut is not None else 0
    if cut is not None:
        _check_head_against_cut(signed, cut)
    if signed["seq"] > last or (cut is None and signed["seq"] > 0 and signed["seq"] < first):
        raise VerificationError(
            f"the signed head is at event {signed['seq']} but the export holds events {first} to {last}", last + 1
        )
    verified: VerifiedChain = {
        "account_id": signed["account_id"],
        "head_seq": signed["seq"],
        "head_hash": signed["hash"],
        "events": len(ordered),
    }
    if cut is not None:
        verified["checkpoint_seq"] = cut["seq"]
    return verified
