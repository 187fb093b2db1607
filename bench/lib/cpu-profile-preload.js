// Preloaded into every component with NODE_OPTIONS=--require (which, unlike --cpu-prof, NODE_OPTIONS
// accepts) when the bench runs with --profile: samples the CPU from start to exit and writes a
// .cpuprofile named like --cpu-prof's into BENCH_CPU_PROFILE_DIR.
'use strict';
const inspector = require('node:inspector');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');

const directory = process.env.BENCH_CPU_PROFILE_DIR;
if (directory) {
  const session = new inspector.Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 500 });
  session.post('Profiler.start');
  process.on('exit', () => {
    // An in-thread session answers synchronously, so the file is written before the process ends.
    session.post('Profiler.stop', (error, result) => {
      if (!error) writeFileSync(join(directory, `CPU.0.0.${process.pid}.0.001.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
