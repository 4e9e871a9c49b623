import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const root = fileURLToPath(new URL('.', import.meta.url));

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
    maxWorkers: 2,
  },
});
