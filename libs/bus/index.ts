export type {
  Bus,
  BoundHandler,
  Handler,
  RequestContext,
  RequestOptions,
  ServiceSpec,
  ServedService,
} from './types.js';
export { handle, handleOnce } from './dispatch.js';
export { onceByCall, type CallOutcomeStore } from './once.js';
export { EncodedJson } from './encoded-json.js';
export { connectNatsBus } from './nats-bus.js';
export { createInProcessBus } from './in-process-bus.js';
export type { ActionEventStream, ConsumerSpec } from './action-event-stream.js';
export { createDroppedOnChange, type DroppedOnChange } from './dropped-on-change.js';
export { defaultResilience, type Resilience } from './nats-bus.js';
