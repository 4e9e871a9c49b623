import type { Plan } from '@agent-auth/contracts';

/** The monthly quota of a plan: the free plan's from configuration, none on the unlimited plan. */
export function monthlyQuota(plan: Plan, freeQuota: number): number | null {
  return plan === 'unlimited' ? null : freeQuota;
}
