export { AgentAuthClient, type ClientOptions, type WaitOptions } from './client.js';
export { PaymentClient, type PaymentInput } from './payments.js';
export {
  AgentAuthError,
  ValidationError,
  UnauthorizedError,
  QuotaExceededError,
  ForbiddenError,
  NotFoundError,
  ConflictError,
  RateLimitedError,
  UpstreamError,
  WaitTimeoutError,
} from './errors.js';
export * from './types.js';
export {
  verifyReceipt,
  verifyAuditChain,
  auditEventHash,
  canonicalSha256,
  requestHashOf,
  VerificationError,
  type ReceiptClaims,
  type AuditEvent,
  type AuditHead,
  type AuditCheckpoint,
  type VerifiedChain,
} from './verify.js';
