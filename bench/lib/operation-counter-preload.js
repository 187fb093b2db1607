// Preloaded into every component with NODE_OPTIONS=--require by the bench (lib/db-operations.ts for the
// scenarios' operations per event; lib/operation-counts.ts for bench/sale-operations.ts and
// bench/payout-operations.ts): counts the database commands each process sends (the driver's own
// command monitoring; the local MongoDB-compatible server keeps no operation counters) and the HTTP
// requests it makes to other components, and writes the totals into BENCH_OPERATION_COUNT_DIR
// (`<pid>.json`, with the component's name), so that the bench can take the difference over a known
// number of requests.
// Counted at the driver, not guessed from the code: what the code does and what it sends can differ.
'use strict';
const { renameSync, writeFileSync } = require('node:fs');
const { join, sep } = require('node:path');
const diagnostics = require('node:diagnostics_channel');

const directory = process.env.BENCH_OPERATION_COUNT_DIR;
if (directory) {
  /** The driver's own chatter (handshakes, heartbeats, sessions) is not the work of a request. */
  const IGNORED = new Set([
    'hello',
    'isMaster',
    'ismaster',
    'ping',
    'endSessions',
    'buildInfo',
    'getParameter',
    'saslStart',
    'saslContinue',
  ]);
  // services/<name>/dist/start.js or gateway/dist/start.js: the component is the folder above dist.
  const parts = (process.argv[1] ?? '').split(sep);
  const component = parts[parts.lastIndexOf('dist') - 1] ?? 'unknown';
  const counts = { component, database: {}, http: 0 };
  let dirty = false;
  // The driver the component itself loads (resolved from its entry point).
  const { MongoClient } = require(require.resolve('mongodb', { paths: [process.argv[1] ?? process.cwd()] }));
  const connect = MongoClient.prototype.connect;
  MongoClient.prototype.connect = function connectCounted(...args) {
    this.monitorCommands = true;
    this.on('commandStarted', (event) => {
      if (IGNORED.has(event.commandName)) return;
      const collection = typeof event.command[event.commandName] === 'string' ? event.command[event.commandName] : '';
      const name = `${event.commandName} ${collection}`.trim();
      counts.database[name] = (counts.database[name] ?? 0) + 1;
      dirty = true;
    });
    return connect.apply(this, args);
  };
  // fetch (undici) and node:http: the service clients and the gateway's proxy.
  for (const channel of ['undici:request:create', 'http.client.request.start']) {
    diagnostics.subscribe(channel, () => {
      counts.http += 1;
      dirty = true;
    });
  }
  const write = () => {
    if (!dirty) return;
    dirty = false;
    // Written aside and renamed, so a reader never sees half a file.
    const file = join(directory, `${process.pid}.json`);
    writeFileSync(`${file}.tmp`, JSON.stringify(counts));
    renameSync(`${file}.tmp`, file);
  };
  setInterval(write, 100).unref();
  process.on('exit', write);
}
