export * from './glob.js';
export * from './local-time.js';
export * from './facts.js';
export * from './conditions.js';
export * from './rules.js';
export * from './cedar-schema.js';
export * from './cedar.js';
export * from './decision.js';
