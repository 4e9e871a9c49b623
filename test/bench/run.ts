// npm run bench: the bench cases in turn, each printing its figures and ratios.
// Settings: BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 32), BENCH_CASES (comma list of case names;
// default all), and each case's own (see its file). `create` runs the bare reference server beside the services.
import { resolveInfra } from '../infra/resolve.js';
import { actionCreation } from './action-creation.js';
import { admissionBench } from './admission.js';
import { agentOutcomeBench } from './agent-outcome.js';
import { dependencyPatches } from './dependency-patches.js';
import { idempotencyCost } from './idempotency-cost.js';
import { metricsCost } from './metrics-cost.js';
import { out, settings, type BenchCase } from './load.js';
import { notifyBench } from './notification-latency.js';
import { policyLoad } from './policy-load.js';
import { policyLanguageBench } from './policy-language.js';
import { grantsBench } from './grants.js';
import { hooksBench } from './hooks.js';
import { mcpBench } from './mcp.js';
import { cibaBench } from './ciba.js';
import { escalationBench } from './escalation.js';
import { receiptsCost } from './receipts.js';
import { scaleBench } from './scale.js';
import { vaultBench } from './vault-execution.js';

const cases: BenchCase[] = [
  actionCreation,
  admissionBench,
  policyLoad,
  policyLanguageBench,
  grantsBench,
  vaultBench,
  notifyBench,
  agentOutcomeBench,
  hooksBench,
  mcpBench,
  cibaBench,
  escalationBench,
  scaleBench,
  metricsCost,
  receiptsCost,
  idempotencyCost,
  dependencyPatches,
];

const only = process.env.BENCH_CASES?.split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const selected = only ? cases.filter((c) => only.includes(c.name)) : cases;
if (selected.length === 0) {
  out(`BENCH_CASES matches no case; cases: ${cases.map((c) => c.name).join(', ')}`);
  process.exit(2);
}

const infra = await resolveInfra();
out(
  `Benchmarks: ${selected.map((c) => c.name).join(', ')}; load runs use ${settings.connections} connections for ${settings.seconds} s after a 2 s warm-up; per-request access logs off`,
);
for (const note of infra.notes) out(`  ${note}`);
try {
  for (const c of selected) {
    out(`\n== ${c.name}: ${c.description}`);
    await c.run(infra);
  }
} finally {
  await infra.stop();
}
