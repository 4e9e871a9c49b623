/** Dollars (major units) to integer cents, rounding half away from zero; the epsilon undoes binary error (10.005 → 1001). */
export function toCents(amount: number): number {
  return Math.sign(amount) * Math.round(Math.abs(amount) * 100 * (1 + Number.EPSILON));
}

/** Integer cents back to major units. */
export function fromCents(cents: number): number {
  return cents / 100;
}
