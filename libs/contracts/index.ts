export * from './ids.js';
export * from './enums.js';
export * from './validation.js';
export * from './http/actions.js';
export * from './http/identities.js';
export * from './bus/envelope.js';
export * from './bus/actions.js';
export * from './bus/events.js';
