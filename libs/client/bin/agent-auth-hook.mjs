#!/usr/bin/env node
// A coding agent's command hook (Codex) that asks the holder through the service (see README.md).
const { main } = await import('../dist/hook-cli.js');
process.exitCode = await main(process.argv.slice(2));
