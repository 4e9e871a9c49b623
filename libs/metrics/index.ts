export * from './registry.js';
export { startMetricsServer, type MetricsServer } from './server.js';
