import { createRequire } from 'node:module';

type CedarWasm = typeof import('@cedar-policy/cedar-wasm/nodejs');

let engine: CedarWasm | undefined;

/**
 * Cedar's own parser, validator and authorizer (WebAssembly, built for Node). Loaded on first use, so a process
 * that never meets a Cedar policy does not compile its 4 MB module.
 */
export function cedarEngine(): CedarWasm {
  engine ??= createRequire(import.meta.url)('@cedar-policy/cedar-wasm/nodejs') as CedarWasm;
  return engine;
}
