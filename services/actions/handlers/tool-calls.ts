import { type BoundHandler, handle } from '@agent-auth/bus';
import { toolCallEndpoints as ep } from '@agent-auth/contracts';
import type { UseCases } from '../use-cases/use-cases.js';

/** Coding agents' hook calls, and an agent withdrawing its own pending request. */
export function toolCallHandlers(uc: UseCases): BoundHandler[] {
  return [
    handle(ep.createToolCall, (call, ctx) => uc.createToolCall(call, ctx)),
    handle(ep.cancel, (request, ctx) => uc.cancel(request, ctx)),
  ];
}
