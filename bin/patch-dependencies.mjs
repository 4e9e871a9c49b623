#!/usr/bin/env node
// Repairs known defects of dependencies in place, after every install (bin/prepare.mjs, the Dockerfile), until a
// release fixes them. Idempotent: a patched file carries a marker and is left alone; a file that is not the code a
// patch knows is left as it is, with a line saying so.
//
// postgres.js 3.4.9 (porsager/postgres#1154, #1208; fix proposed in #1168, #1209): a small write is deferred with
// setImmediate; when the connection closes first (a database restart), the deferred write dereferences the nulled
// socket and throws from the immediate, an uncaught TypeError that kills the whole process, and the stale timer
// left behind keeps the connection from ever flushing again. The chaos suite's Postgres restart found it taking
// down an actions replica. Patched: a write with no socket fails its queries with CONNECTION_CLOSED (the pool
// reconnects), and closing clears the pending write.
//
// postgres.js 3.4.9: each query's resolve and reject were arrow functions over the query, made in its constructor.
// With them every finished query, with its parameters and result rows, outlived the scavenges after it and was
// promoted to the old generation, which only a full collection frees: a bare loop of `select 1` at 1,400/s
// promoted 570 kB per scavenge (1.5 ms each), the all-in-one service at 1,400 creates/s about 2 MB (a full
// mark-compact every 6.6 s, each a burst of 60-110 creates late by 10-80 ms). Patched: a query settles through
// methods of its prototype, which clear `active` as before; the loop promotes 12 kB per scavenge (0.18 ms), the
// service about 1 MB (a mark-compact every 13 s). (Why the closures kept finished queries alive was not found.)
//
// @nats-io/nats-core 3.4.0 (and main as of 2026-11): every answered request, after resolving its promise, calls
// `cancel()`, which builds `new RequestError("cancelled")` (an Error, so a captured stack) to reject the promise it
// has just resolved, a no-op. That is a stack capture per bus request even with `noAsyncTraces` (3 % of a gateway's
// busy time on the list paths). Patched: an answered request only leaves the mux (its timer is already cancelled).
//
// @nats-io/nats-core 3.4.0: the first message queued on an idle connection schedules the socket write with
// queueMicrotask, so a process answering many requests writes once per request (each answer is finished by its
// own chain of promises, and the flush runs between them). Patched: with setImmediate, the messages of one turn of
// the event loop go out in one write. Under create load over NATS the gateway's writes per create went 2.4 -> 1.3,
// nats-server's CPU per create 0.13 -> 0.09 ms (it reads fewer, larger packets), all processes' together 0.66-0.72
// -> 0.61 ms. A message waits at most for the I/O callbacks of the turn it was queued in.
//
// postgres.js 3.4.9: a query goes to the idle connection that has been idle longest (a FIFO), so one statement at a
// time went round all the pool's connections, each time to a backend process that had slept longest. Paced at 3,000
// creates/s the all-in-one's five pool backends each took a fifth of the create statements, 0.165-0.168 ms of their
// CPU per create; with the idle connection used last going first, 0.144-0.146 (three runs each, the same process
// CPU). A busy pool still spreads its queries over every connection. Patched: the pool takes the newest idle one.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

const patches = [
  {
    what: 'nextWrite on a closed connection',
    marker: '/* agent-auth: nextWrite guard */',
    files: ['node_modules/postgres/src/connection.js', 'node_modules/postgres/cjs/src/connection.js'],
    edits: (marker) => [
      {
        from: `  function nextWrite(fn) {
    const x = socket.write(chunk, fn)`,
        to: `  function nextWrite(fn) {
    ${marker}
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
    ],
  },
  {
    what: 'settling a query without closures over it',
    marker: '/* agent-auth: settle by method */',
    files: ['node_modules/postgres/src/query.js', 'node_modules/postgres/cjs/src/query.js'],
    edits: (marker) => [
      {
        from: `    this.resolve = x => (this.active = false, resolve(x))
    this.reject = x => (this.active = false, reject(x))
`,
        to: `    ${marker}
    this.settle = resolve
    this.fail = reject
`,
      },
      {
        from: `  static get [Symbol.species]() {`,
        to: `  resolve(x) {
    this.active = false
    this.settle(x)
  }

  reject(x) {
    this.active = false
    this.fail(x)
  }

  static get [Symbol.species]() {`,
      },
    ],
  },
  {
    what: 'no error built for an answered request',
    marker: '/* agent-auth: answered request leaves the mux */',
    files: ['node_modules/@nats-io/nats-core/lib/request.js'],
    edits: (marker) => [
      {
        from: `        else {
            this.deferred.resolve(msg);
        }
        this.cancel();
    }`,
        to: `        else {
            this.deferred.resolve(msg);
        }
        ${marker}
        this.mux.cancel(this);
    }`,
      },
    ],
  },
  {
    what: 'one socket write per event loop turn',
    marker: '/* agent-auth: flush once per turn */',
    files: ['node_modules/@nats-io/nats-core/lib/protocol.js'],
    edits: (marker) => [
      {
        from: `        if (len === 0) {
            queueMicrotask(() => {
                this.flushPending();
            });
        }`,
        to: `        if (len === 0) {
            ${marker}
            setImmediate(() => {
                this.flushPending();
            });
        }`,
      },
    ],
  },
  {
    what: 'a queue that gives back its newest entry',
    marker: '/* agent-auth: queue pop */',
    files: ['node_modules/postgres/src/queue.js', 'node_modules/postgres/cjs/src/queue.js'],
    edits: (marker) => [
      {
        from: `    push: (x) => (xs.push(x), x),`,
        to: `    push: (x) => (xs.push(x), x),
    ${marker}
    pop: () => {
      const out = xs.pop()
      if (index === xs.length) {
        index = 0
        xs = []
      }
      return out
    },`,
      },
    ],
  },
  {
    what: 'the idle connection used last goes first',
    marker: '/* agent-auth: last used first */',
    files: ['node_modules/postgres/src/index.js', 'node_modules/postgres/cjs/src/index.js'],
    edits: (marker) => [
      {
        from: `    if (open.length)
      return go(open.shift(), query)`,
        to: `    ${marker}
    if (open.length)
      return go(open.pop(), query)`,
      },
    ],
  },
];

for (const patch of patches) {
  for (const file of patch.files) {
    const path = join(root, file);
    if (!existsSync(path)) continue;
    let text = readFileSync(path, 'utf8');
    if (text.includes(patch.marker)) continue;
    const edits = patch.edits(patch.marker);
    if (!edits.every((e) => text.includes(e.from))) {
      process.stderr.write(`${file}: not the code this patch knows (updated?); left as it is\n`);
      continue;
    }
    for (const e of edits) text = text.replace(e.from, e.to);
    writeFileSync(path, text);
    process.stderr.write(`${file}: patched (${patch.what})\n`);
  }
}
