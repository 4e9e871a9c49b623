// Wire types of the service's agent API (docs/api-guide.md). They are written out here rather than imported
// so the published package has no dependency on the private contracts package; test/e2e/client.e2e.test.ts parses
// real responses with the contracts' zod schemas to keep the two in step.

export type ActionStatus = 'pending' | 'approved' | 'denied' | 'expired' | 'cancelled';
export type ActionType = 'communication' | 'purchase' | 'scheduling' | 'legal' | 'data_access' | 'social' | 'system';
export type RiskLevel = 'low' | 'medium' | 'high' | 'critical';

/** The statuses from which a request never moves again. */
export const FINAL_STATUSES: readonly ActionStatus[] = ['approved', 'denied', 'expired', 'cancelled'];

/** Input of requestAction: the creation fields of POST /actions (snake_case, as on the wire). */
export interface ActionRequestInput {
  action_type: ActionType;
  /** At most 200 characters. */
  title: string;
  description?: string | null;
  risk_level?: RiskLevel | null;
  reversible?: boolean | null;
  /** Positive, in major units (dollars), for financial actions. */
  amount?: number | null;
  /** ISO 4217 code; USD by default. */
  currency?: string | null;
  recipient?: string | null;
  /** At most 20 keys and 8 KB of JSON. */
  metadata?: Record<string, unknown> | null;
  /** 30 to 3600; 300 by default. */
  expires_in_seconds?: number | null;
  /** HTTPS URL that receives a webhook when the request is resolved. */
  callback_url?: string | null;
}

export interface SpendingLimitExceeded {
  period: string;
  limit: number;
  spent: number;
  requested: number;
}

/** An action request as the service returns it. */
export interface Action {
  id: string;
  agent_id: string;
  status: ActionStatus;
  action_type: ActionType;
  title: string;
  description: string | null;
  risk_level: RiskLevel;
  reversible: boolean;
  amount: number | null;
  amount_cents: number | null;
  currency: string;
  recipient: string | null;
  metadata: Record<string, unknown>;
  callback_url: string | null;
  content_hash: string | null;
  rule_applied: string | null;
  resolved_by: string | null;
  resolved_at: string | null;
  reason: string | null;
  created_at: string;
  expires_at: string;
  spending_limit_exceeded?: SpendingLimitExceeded;
  /** The signed receipt (compact JWS) once the request left pending; null while pending. */
  receipt?: string | null;
  /** Approved with changes: the tool input the holder edited, which the tool must run with instead. */
  updated_input?: Record<string, unknown>;
}

/** Filters of getHistory (GET /actions). */
export interface HistoryQuery {
  /** 1 to 200; 50 by default. */
  limit?: number;
  status?: ActionStatus;
  action_type?: ActionType;
}

/** One spending limit with what has been spent against it. */
export interface SpendingSummaryEntry {
  limit_id: string;
  period: string;
  limit: number;
  spent: number;
  remaining: number;
  utilization: number;
}

export interface SpendingSummary {
  agent_id: string;
  summaries: SpendingSummaryEntry[];
}

/** A credential in the vault, without its secret. */
export interface VaultService {
  service_name: string;
  auth_type: string;
  allowed_hosts: string[];
  description: string | null;
}

/** An API call to make through the vault (the vault execution metadata of a request). */
export interface ApiCallInput {
  service_name: string;
  /** HTTP method, e.g. GET or POST. */
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string;
  /** Shown to the holder; defaults to "<METHOD> <url> via <service_name>". */
  title?: string;
  description?: string;
  risk_level?: RiskLevel;
  expires_in_seconds?: number;
}

/** The upstream response of a vault execution, copied by the service. */
export interface VaultResponse {
  status_code: number;
  headers: Record<string, string>;
  body: string;
}

/** Outcome of executeApiCall: the final action, and the upstream response when it was approved and executed. */
export interface ApiCallResult {
  action: Action;
  response: VaultResponse | null;
}
