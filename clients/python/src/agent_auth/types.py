"""Wire types of the service's agent API (docs/api-guide.md), as plain dictionaries with type hints.

Answers are returned as the JSON the service sent, so a field the service adds later is there too; these
``TypedDict`` classes tell a type checker and an editor what to expect.
"""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, Tuple, TypedDict

ActionStatus = Literal["pending", "approved", "denied", "expired", "cancelled"]
ActionType = Literal["communication", "purchase", "scheduling", "legal", "data_access", "social", "system"]
RiskLevel = Literal["low", "medium", "high", "critical"]

#: The statuses from which a request never moves again.
FINAL_STATUSES: Tuple[str, ...] = ("approved", "denied", "expired", "cancelled")


class SpendingLimitExceeded(TypedDict):
    """The figures of the spending limit that denied a request at creation."""

    period: str
    limit: float
    spent: float
    requested: float


class QuorumApproval(TypedDict):
    device_id: str
    method: str
    at: str
    signed: bool


class Quorum(TypedDict):
    """Under a quorum rule: how many distinct devices must approve, and the approvals so far."""

    required: int
    approvals: List[QuorumApproval]


class _ActionFields(TypedDict):
    id: str
    agent_id: str
    status: ActionStatus
    action_type: ActionType
    title: str
    description: Optional[str]
    risk_level: RiskLevel
    reversible: bool
    amount: Optional[float]
    amount_cents: Optional[int]
    currency: str
    recipient: Optional[str]
    metadata: Dict[str, Any]
    callback_url: Optional[str]
    content_hash: Optional[str]
    rule_applied: Optional[str]
    resolved_by: Optional[str]
    resolved_at: Optional[str]
    reason: Optional[str]
    created_at: str
    expires_at: str
    user_verified: bool
    passkey_id: Optional[str]
    #: The signed receipt (compact JWS) once the request left pending; None while pending.
    receipt: Optional[str]
    quorum: Optional[Quorum]


class Action(_ActionFields, total=False):
    """An action request as the service returns it."""

    spending_limit_exceeded: SpendingLimitExceeded
    #: Approved with changes: the tool input the holder edited, which the tool must run with instead.
    updated_input: Dict[str, Any]


class HistoryPage(TypedDict):
    """One page of ``GET /actions``: newest first; pass ``next_cursor`` back as ``cursor`` (None on the last page)."""

    actions: List[Action]
    next_cursor: Optional[str]


class SpendingSummaryEntry(TypedDict):
    """One spending limit with what has been spent against it."""

    limit_id: str
    period: str
    limit: float
    spent: float
    remaining: float
    utilization: float


class SpendingSummary(TypedDict):
    agent_id: str
    summaries: List[SpendingSummaryEntry]


class VaultService(TypedDict):
    """A credential in the vault, without its secret."""

    service_name: str
    auth_type: str
    allowed_hosts: List[str]
    description: Optional[str]


class VaultResponse(TypedDict):
    """The upstream response of a vault execution, as the service copied it."""

    status_code: int
    headers: Dict[str, str]
    body: str


class ApiCallResult(TypedDict):
    """Outcome of ``execute_api_call``: the final action, and the upstream response when it was approved."""

    action: Action
    response: Optional[VaultResponse]


class ReceiptClaims(TypedDict, total=False):
    """The claims of a receipt: who resolved which request, how, when, under which policy."""

    iss: str
    sub: str
    iat: int
    account_id: str
    agent_id: str
    status: str
    resolved_by: str
    resolved_at: str
    created_at: str
    action_type: str
    amount_cents: Optional[int]
    currency: str
    content_hash: Optional[str]
    request_hash: Optional[str]
    policy_version: str
    device_id: str
    device_signature: Optional[str]
    user_verified: bool
    passkey_id: Optional[str]


class AuditEvent(TypedDict):
    """One event of an account's audit chain (``GET /audit``)."""

    seq: int
    at: str
    request_id: Optional[str]
    type: str
    actor: str
    data: Dict[str, Any]
    prev_hash: str
    hash: str


class AuditHead(TypedDict):
    """The signed head of an account's chain (``GET /audit/head``)."""

    seq: int
    hash: str
    at: Optional[str]
    signature: str


class AuditCheckpoint(TypedDict):
    """Where retention cut an account's chain (``GET /audit``'s first page carries it): the last dropped event's
    ``seq``, ``hash`` and ``at``, signed over them and the account with typ ``aa-audit-checkpoint+jws``."""

    seq: int
    hash: str
    at: str
    signature: str


class _ChainProof(TypedDict):
    account_id: str
    head_seq: int
    head_hash: str
    events: int


class VerifiedChain(_ChainProof, total=False):
    """What a verified chain proves: the account, how far the head's signature covers, how many events were checked,
    and, for a chain retention cut, the checkpoint it was verified from (nothing before it is proved but its hash)."""

    checkpoint_seq: int
