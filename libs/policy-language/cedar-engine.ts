import { createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';

type CedarWasm = typeof import('@cedar-policy/cedar-wasm/nodejs');

let engine: CedarWasm | undefined;

/**
 * Node 20's V8 (11.3) inlines calls from optimized JavaScript into WebAssembly, and aborts the whole process
 * ("Fatal error … unreachable code" in Deoptimizer::DoComputeBuiltinContinuation) when such a caller is lazily
 * deoptimized while Cedar's module calls back into JavaScript: a replay of 100,000 requests under Cedar policies hit
 * it within a few runs. Turned off before the module is loaded, so no Cedar caller is ever compiled with it; the
 * cost is a call's wrapper, well under a microsecond against the tens Cedar takes.
 */
const AVOID_V8_WASM_INLINING_ABORT = '--no-turbo-inline-js-wasm-calls';

/**
 * Cedar's own parser, validator and authorizer (WebAssembly, built for Node). Loaded on first use, so a process
 * that never meets a Cedar policy does not compile its 4 MB module.
 */
export function cedarEngine(): CedarWasm {
  if (!engine) {
    setFlagsFromString(AVOID_V8_WASM_INLINING_ABORT);
    engine = createRequire(import.meta.url)('@cedar-policy/cedar-wasm/nodejs') as CedarWasm;
  }
  return engine;
}
