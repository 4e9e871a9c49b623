import type { Bus } from '@agent-auth/bus';
import type { NotifierSettings } from '@agent-auth/config';
import type { Logger } from '@agent-auth/logging';
import type { DeliveryStore } from '../store/deliveries.js';
import type { PushStore } from '../store/push-subscriptions.js';
import type { PushProvider } from '../adapters/push.js';
import type { WebhookPoster } from '../adapters/webhook-poster.js';

/** Everything the notifier's use cases and workers need, passed in. */
export interface NotifierDeps {
  bus: Bus;
  settings: NotifierSettings;
  log: Logger;
  deliveries: DeliveryStore;
  pushSubscriptions: PushStore;
  poster: WebhookPoster;
  /** Null when no push provider is configured: devices then hear through the live stream only. */
  push: PushProvider | null;
}
