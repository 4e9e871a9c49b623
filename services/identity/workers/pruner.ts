import { startWakeLoop } from '@agent-auth/lifecycle';
import type { Logger } from '@agent-auth/logging';
import type { AuthorizationStore } from '../store/authorizations.js';
import type { ConnectionStore } from '../store/connections.js';
import type { SignInStore } from '../store/sign-ins.js';

const PRUNE_EVERY_MS = 3_600_000;

/**
 * Deletes what can no longer be used, now and every hour: day-old authorization requests, expired tokens, expired
 * sign-ins and their tickets.
 */
export function startPruner(
  stores: { authorizations: AuthorizationStore; connections: ConnectionStore; signIns: SignInStore },
  log: Logger,
) {
  return startWakeLoop({
    pollMs: PRUNE_EVERY_MS,
    pass: async () => {
      const pruned =
        (await stores.authorizations.prune()) + (await stores.connections.prune()) + (await stores.signIns.prune());
      if (pruned > 0) log.info({ pruned }, 'expired OAuth requests and tokens pruned');
    },
    onError: (err) => log.warn({ err }, 'pruning OAuth requests and tokens failed'),
  });
}
