export {
  type BusService,
  databaseOf,
  type ProcessParts,
  type Running,
  runServiceProcess,
  type ServiceProcess,
  serveBusService,
} from './service.js';
export type { BusNeed, DatabaseNeed } from './connections.js';
export { inFlightWork, type InFlightWork } from './in-flight-work.js';
export { untilSignal } from './signals.js';
export { startWakeLoop, type WakeLoop, type WakeLoopOptions } from './wake-loop.js';
export { exitOnStartupError, StartupError } from './startup-errors.js';
