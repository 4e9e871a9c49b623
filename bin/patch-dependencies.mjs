#!/usr/bin/env node
// Repairs a known defect of a dependency in place, after every install (bin/prepare.mjs, the Dockerfile), until a
// release fixes it. Idempotent: a patched file carries a marker and is left alone.
//
// postgres.js 3.4.9 (porsager/postgres#1154, #1208; fix proposed in #1168, #1209): a small write is deferred with
// setImmediate; when the connection closes first (a database restart), the deferred write dereferences the nulled
// socket and throws from the immediate, an uncaught TypeError that kills the whole process, and the stale timer
// left behind keeps the connection from ever flushing again. The chaos suite's Postgres restart found it taking
// down an actions replica. Patched: a write with no socket fails its queries with CONNECTION_CLOSED (the pool
// reconnects), and closing clears the pending write.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const MARKER = '/* agent-auth: nextWrite guard */';

const edits = [
  {
    from: `  function nextWrite(fn) {
    const x = socket.write(chunk, fn)`,
    to: `  function nextWrite(fn) {
    ${MARKER}
    if (!socket) {
      nextWriteTimer !== null && clearImmediate(nextWriteTimer)
      chunk = nextWriteTimer = null
      error(Errors.connection('CONNECTION_CLOSED', options, socket))
      return false
    }
    const x = socket.write(chunk, fn)`,
  },
  {
    from: `    clearImmediate(nextWriteTimer)
    socket.removeListener('data', data)`,
    to: `    clearImmediate(nextWriteTimer)
    chunk = nextWriteTimer = null
    socket.removeListener('data', data)`,
  },
];

for (const file of ['node_modules/postgres/src/connection.js', 'node_modules/postgres/cjs/src/connection.js']) {
  const path = join(root, file);
  if (!existsSync(path)) continue;
  let text = readFileSync(path, 'utf8');
  if (text.includes(MARKER)) continue;
  if (!edits.every((e) => text.includes(e.from))) {
    process.stderr.write(`${file}: not the code this patch knows (postgres.js updated?); left as it is\n`);
    continue;
  }
  for (const e of edits) text = text.replace(e.from, e.to);
  writeFileSync(path, text);
  process.stderr.write(`${file}: patched (nextWrite on a closed connection)\n`);
}
