import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { willUseEmbeddedPostgres } from './test/infra/resolve.js';

const root = fileURLToPath(new URL('.', import.meta.url));

// The embedded Postgres serves one connection at a time: its test files run one after another, and the stacks
// they start use a pool of one (test/harness/stack.ts).
const embedded = await willUseEmbeddedPostgres();
if (embedded) process.env.TEST_DB_POOL_SIZE = '1';

export default defineConfig({
  resolve: {
    // Tests import the libraries' TypeScript sources directly; the services under test run from dist/.
    alias: [{ find: /^@agent-auth\/([a-z-]+)$/, replacement: `${root}libs/$1/index.ts` }],
  },
  test: {
    include: ['libs/**/*.test.ts', 'services/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    globalSetup: ['test/infra/global-setup.ts'],
    reporters: ['default', './test/infra/summary-reporter.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: embedded ? 1 : 2,
    fileParallelism: !embedded,
  },
});
