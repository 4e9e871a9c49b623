import type { ReceiptKeys } from '../domain/receipt-keys.js';
import { receiptClaims, type Resolution } from '../domain/receipt-claims.js';

type Signed = Parameters<typeof receiptClaims>[1];

/** Signs receipts with the current receipt key; null when receipts are switched off. */
export interface ReceiptIssuer {
  readonly enabled: boolean;
  sign(row: Signed, resolution: Resolution): Promise<string | null>;
}

/** The issuer of this service's receipts; `issuer` is read when signing (all-in-one learns its address late). */
export function createReceiptIssuer(keys: ReceiptKeys, issuer: () => string, enabled: boolean): ReceiptIssuer {
  return {
    enabled,
    async sign(row, resolution) {
      return enabled ? keys.signReceipt(receiptClaims(issuer(), row, resolution)) : null;
    },
  };
}

/** The receipts' default `iss`: the public base URL, else the gateway's address under the same settings. */
export function defaultReceiptIssuer(config: {
  RECEIPT_ISSUER?: string;
  PUBLIC_BASE_URL?: string;
  HOST: string;
  PORT: number;
}): string {
  if (config.RECEIPT_ISSUER) return config.RECEIPT_ISSUER;
  if (config.PUBLIC_BASE_URL) return config.PUBLIC_BASE_URL.replace(/\/+$/, '');
  const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.PORT}/api/v1`;
}
