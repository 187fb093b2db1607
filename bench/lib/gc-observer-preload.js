// Preloaded into every component with NODE_OPTIONS=--require (NODE_OPTIONS refuses --trace-gc):
// writes one line per garbage collection to stderr, which the harness keeps in the component's log,
// with the wall-clock time it began, so the bench can set V8's pauses beside the slow events.
'use strict';
const { PerformanceObserver, performance } = require('node:perf_hooks');

const KINDS = { 1: 'Scavenge', 2: 'Mark-Compact', 4: 'Incremental marking', 8: 'Weak callbacks' };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = KINDS[entry.detail?.kind] ?? 'GC';
    process.stderr.write(`[bench-gc] ${Math.round(performance.timeOrigin + entry.startTime)} ${entry.duration.toFixed(2)} ms ${kind}\n`);
  }
}).observe({ entryTypes: ['gc'] });
