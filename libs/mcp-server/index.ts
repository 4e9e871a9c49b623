export { createServer, SERVER_NAME, SERVER_VERSION, type ServerOptions } from './server.js';
export { registerTools } from './tools.js';
