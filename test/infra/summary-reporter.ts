import type { Reporter, TestModule } from 'vitest/node';

/** Prints the plain closing line "Tests: N passed, N failed, N skipped" that any CI can read. */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const module of testModules) {
      let failedTests = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') counts.passed++;
        else if (state === 'failed') failedTests++;
        else counts.skipped++;
      }
      // A file that failed outside its tests (a beforeAll that threw leaves them all skipped) counts as one failure:
      // otherwise the line would read "0 failed" for a run that failed.
      counts.failed += module.state() === 'failed' && failedTests === 0 ? 1 : failedTests;
    }
    process.stdout.write(`\nTests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  }
}
