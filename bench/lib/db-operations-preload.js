// Preloaded into every component with NODE_OPTIONS=--require by the bench: counts the database
// commands the component sends, by command name, from the driver's command monitoring, and keeps the
// counts in BENCH_DB_OPS_DIR/<pid>.json (rewritten a few times a second while they change). The
// local MongoDB-compatible server (mongo-java-server) keeps no operation counters of its own
// (serverStatus has no opcounters), so the driver's side of the wire is where they are counted.
'use strict';
const { renameSync, writeFileSync } = require('node:fs');
const { join, sep } = require('node:path');

const directory = process.env.BENCH_DB_OPS_DIR;
if (directory) {
  // services/<name>/dist/start.js or gateway/dist/start.js: the component is the folder above dist.
  const parts = (process.argv[1] ?? '').split(sep);
  const component = parts[parts.lastIndexOf('dist') - 1] ?? 'unknown';
  const counts = {};
  let changed = false;
  let mongodb;
  try {
    mongodb = require(require.resolve('mongodb', { paths: [process.argv[1] ?? process.cwd()] }));
  } catch {
    mongodb = undefined;
  }
  if (mongodb) {
    const connect = mongodb.MongoClient.prototype.connect;
    const counted = Symbol('bench-db-operations');
    mongodb.MongoClient.prototype.connect = function countedConnect(...args) {
      if (!this[counted]) {
        this[counted] = true;
        this.monitorCommands = true;
        this.on('commandStarted', (event) => {
          counts[event.commandName] = (counts[event.commandName] ?? 0) + 1;
          changed = true;
        });
      }
      return connect.apply(this, args);
    };
    const file = join(directory, `${process.pid}.json`);
    const write = () => {
      if (!changed) return;
      changed = false;
      // Written aside and renamed, so a snapshot never reads half a file.
      writeFileSync(`${file}.tmp`, JSON.stringify({ component, counts }));
      renameSync(`${file}.tmp`, file);
    };
    setInterval(write, 200).unref();
    process.on('exit', write);
  }
}
