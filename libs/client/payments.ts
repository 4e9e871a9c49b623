import { AgentAuthClient, type ClientOptions, type WaitOptions } from './client.js';
import type { Action } from './types.js';

export interface PaymentInput {
  /** Positive, in major units (e.g. 12.50 dollars). */
  amount: number;
  /** Who is paid; shown to the holder and stored as the recipient. */
  merchant: string;
  description?: string;
  /** ISO 4217 code; USD by default. */
  currency?: string;
  metadata?: Record<string, unknown>;
  expires_in_seconds?: number;
  callback_url?: string;
}

/** A narrow client for agents that only ever ask to pay: request a payment, wait for the answer. */
export class PaymentClient {
  private readonly client: AgentAuthClient;

  constructor(options: ClientOptions) {
    this.client = new AgentAuthClient(options);
  }

  /** Asks the holder to approve a purchase; returns at once with the pending (or rule-decided) request. */
  requestPayment(input: PaymentInput, options: { signal?: AbortSignal } = {}): Promise<Action> {
    const currency = (input.currency ?? 'USD').toUpperCase();
    const title = `Pay ${input.merchant} ${input.amount.toFixed(2)} ${currency}`.slice(0, 200);
    return this.client.requestAction(
      {
        action_type: 'purchase',
        title,
        description: input.description,
        amount: input.amount,
        currency,
        recipient: input.merchant,
        metadata: input.metadata,
        expires_in_seconds: input.expires_in_seconds,
        callback_url: input.callback_url,
        // Money leaves the account: not undoable by the agent.
        reversible: false,
      },
      options,
    );
  }

  /** Waits until the payment request is approved, denied or expired. */
  waitForResult(requestId: string, options: WaitOptions = {}): Promise<Action> {
    return this.client.waitForResult(requestId, options);
  }

  /** Reads the payment request's current state. */
  getStatus(requestId: string, options: { signal?: AbortSignal } = {}): Promise<Action> {
    return this.client.getStatus(requestId, options);
  }
}
