import { z } from 'zod';

export const actionTypes = [
  'communication',
  'purchase',
  'scheduling',
  'legal',
  'data_access',
  'social',
  'system',
] as const;
export const ActionType = z.enum(actionTypes);
export type ActionType = z.infer<typeof ActionType>;

/** Ordered lowest to highest; the index is the rank used for sorting and rule matching. */
export const riskLevels = ['low', 'medium', 'high', 'critical'] as const;
export const RiskLevel = z.enum(riskLevels);
export type RiskLevel = z.infer<typeof RiskLevel>;

/** Rank of a risk level: low 0 … critical 3. */
export function riskRank(level: RiskLevel): number {
  return riskLevels.indexOf(level);
}

export const actionStatuses = ['pending', 'approved', 'denied', 'expired', 'cancelled'] as const;
export const ActionStatus = z.enum(actionStatuses);
export type ActionStatus = z.infer<typeof ActionStatus>;

export const plans = ['free', 'unlimited'] as const;
export const Plan = z.enum(plans);
export type Plan = z.infer<typeof Plan>;
