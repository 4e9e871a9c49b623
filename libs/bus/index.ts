export type {
  Bus,
  BoundHandler,
  Handler,
  RequestContext,
  RequestOptions,
  ServiceSpec,
  ServedService,
} from './types.js';
export { handle } from './dispatch.js';
export { EncodedJson } from './encoded-json.js';
export { connectNatsBus } from './nats-bus.js';
export { createInProcessBus } from './in-process-bus.js';
export type { ActionEventStream, ConsumerSpec } from './action-event-stream.js';
export { createDroppedOnChange, type DroppedOnChange } from './dropped-on-change.js';
