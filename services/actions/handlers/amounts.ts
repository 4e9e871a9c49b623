// Amount conversion is part of the wire contract (DESIGN "Amounts"), shared with the policy service.
export { fromCents, toCents } from '@agent-auth/contracts';
