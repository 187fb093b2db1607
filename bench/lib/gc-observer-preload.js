// Preloaded into every component with NODE_OPTIONS=--require (NODE_OPTIONS refuses --trace-gc):
// writes one line per garbage collection to stderr, which the harness keeps in the component's log,
// with the wall-clock time it began, so the bench can set V8's pauses beside the slow events.
'use strict';
const { PerformanceObserver, performance, constants } = require('node:perf_hooks');

// The kinds by perf_hooks' own constants (V8's GCType bits): 1 minor (Scavenge), 2 minor mark-sweep,
// 4 major (full Mark-Compact), 8 incremental marking, 16 weak callbacks. Read from the constants, not
// written as numbers: a table of numbers once named the full mark-compacts `Incremental marking`.
const KINDS = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'Scavenge',
  [constants.NODE_PERFORMANCE_GC_MINOR_MARK_SWEEP]: 'Minor Mark-Sweep',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'Mark-Compact',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'Incremental marking',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'Weak callbacks',
};
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = KINDS[entry.detail?.kind] ?? 'GC';
    process.stderr.write(`[bench-gc] ${Math.round(performance.timeOrigin + entry.startTime)} ${entry.duration.toFixed(2)} ms ${kind}\n`);
  }
}).observe({ entryTypes: ['gc'] });
