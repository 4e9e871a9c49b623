"""Python client for the agent action authorization service: an agent asks before it acts, a person approves or
denies on their phone (or a rule, grant or spending limit decides), and the agent learns the outcome.

Standard library only; receipt verification needs the ``verify`` extra (``pip install agent-auth[verify]``).
"""

from .approval import requires_approval, tool_call_title
from .async_client import AsyncClient
from .canonical_json import audit_event_hash, canonical_json, canonical_sha256, content_hash_of, request_hash_of
from .client import Client
from .errors import (
    AgentAuthError,
    ApprovalDeniedError,
    ConflictError,
    ForbiddenError,
    MissingDependencyError,
    NotFoundError,
    QuotaExceededError,
    RateLimitedError,
    ServiceUnreachableError,
    UnauthorizedError,
    UpstreamError,
    ValidationError,
    VerificationError,
    WaitTimeoutError,
)
from .payments import AsyncPaymentClient, PaymentClient
from .types import (
    FINAL_STATUSES,
    Action,
    ActionStatus,
    ActionType,
    ApiCallResult,
    AuditCheckpoint,
    AuditEvent,
    AuditHead,
    HistoryPage,
    ReceiptClaims,
    RiskLevel,
    SpendingSummary,
    SpendingSummaryEntry,
    VaultResponse,
    VaultService,
    VerifiedChain,
)
from .verify import verify_audit_chain, verify_receipt

__version__ = "0.1.0"

__all__ = [
    "FINAL_STATUSES",
    "Action",
    "ActionStatus",
    "ActionType",
    "AgentAuthError",
    "ApiCallResult",
    "ApprovalDeniedError",
    "AsyncClient",
    "AsyncPaymentClient",
    "AuditEvent",
    "AuditCheckpoint",
    "AuditHead",
    "Client",
    "ConflictError",
    "ForbiddenError",
    "HistoryPage",
    "MissingDependencyError",
    "NotFoundError",
    "PaymentClient",
    "QuotaExceededError",
    "RateLimitedError",
    "ReceiptClaims",
    "RiskLevel",
    "ServiceUnreachableError",
    "SpendingSummary",
    "SpendingSummaryEntry",
    "UnauthorizedError",
    "UpstreamError",
    "ValidationError",
    "VaultResponse",
    "VaultService",
    "VerificationError",
    "VerifiedChain",
    "WaitTimeoutError",
    "audit_event_hash",
    "canonical_json",
    "canonical_sha256",
    "content_hash_of",
    "request_hash_of",
    "requires_approval",
    "tool_call_title",
    "verify_audit_chain",
    "verify_receipt",
]
