export { createServer, createToolServer, SERVER_NAME, SERVER_VERSION, type ServerOptions } from './server.js';
export { registerTools } from './tools.js';
export { McpGate, type GateOptions } from './gate/gate.js';
export { needsApproval, type AskMode } from './gate/approval-policy.js';
export { buildActionRequest, approvedArguments, type GatedCall } from './gate/action-request.js';
export type { Cancellation, McpExchange } from './exchange.js';
export { serveMcpExchange, answerParseError, jsonRpcErrorBody } from './http.js';
export { createSharedToolServer, type SharedToolServer } from './json-exchange.js';
export { cancelledIdsOf, isInitialization, needsStream, requestIdsOf } from './json-rpc.js';
