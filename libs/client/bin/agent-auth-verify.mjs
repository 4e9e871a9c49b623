#!/usr/bin/env node
// Verifies a receipt or an exported audit chain of the agent action authorization service (see README.md).
const { main } = await import('../dist/cli.js');
process.exitCode = await main(process.argv.slice(2));
