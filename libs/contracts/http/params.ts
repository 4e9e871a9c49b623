import { z } from 'zod';
import { StoredText } from '../validation.js';

// The path parameters of the API: each names a stored object by the id the API gave it.
const PathId = StoredText().max(100);

/** `{request_id}` of /actions/{request_id}…, /vault/execute/{request_id}. */
export const RequestParams = z.object({ request_id: PathId });
/** `{agent_id}` of /agents/{agent_id}. */
export const AgentParams = z.object({ agent_id: PathId });
/** `{rule_id}` of /rules/{rule_id}. */
export const RuleParams = z.object({ rule_id: PathId });
/** `{policy_id}` of /policies/{policy_id}. */
export const PolicyParams = z.object({ policy_id: PathId });
/** `{limit_id}` of /spending-limits/{limit_id}. */
export const LimitParams = z.object({ limit_id: PathId });
/** `{credential_id}` of /vault/credentials/{credential_id}. */
export const CredentialParams = z.object({ credential_id: PathId });
/** `{grant_id}` of /grants/{grant_id}. */
export const GrantParams = z.object({ grant_id: PathId });
