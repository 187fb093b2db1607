import { existsSync, readFileSync } from 'node:fs';

/** One stop-the-world pause: how long, what kind, and (the JVM's log only) when it ended, ms since the epoch. */
export type GcPause = { ms: number; kind: string; atMs?: number };

export type GcSummary = { process: string; pauses: number; totalMs: number; longest: GcPause[] };

/**
 * The JVM's unified GC log (`-Xlog:gc:file=<path>:time`), e.g.
 * `[2026-11-26T02:55:01.123+0000] GC(12) Pause Young (Normal) (G1 Evacuation Pause) 50M->20M(256M) 12.345ms`.
 * Concurrent phases (G1's `Concurrent Mark Cycle`, ZGC's) do not stop the server and are left out.
 */
export function jvmPauses(text: string): GcPause[] {
  const pauses: GcPause[] = [];
  for (const line of text.split('\n')) {
    const match = /^\[([^\]]+)\].*?\bGC\(\d+\) (Pause .*?)\s+(?:\d+[KMG]->\d+[KMG]\(\d+[KMG]\) )?([\d.]+)ms\s*$/.exec(line);
    if (!match) continue;
    const at = Date.parse((match[1] as string).replace(/([+-]\d\d)(\d\d)$/, '$1:$2'));
    pauses.push({ ms: Number(match[3]), kind: (match[2] as string).trim(), ...(Number.isNaN(at) ? {} : { atMs: at }) });
  }
  return pauses;
}

/**
 * The lines bench/lib/gc-observer-preload.js writes into a component's log, one per collection:
 * `[bench-gc] <epoch ms it began> <pause> ms <kind>` (perf_hooks' gc entries: the main thread's pause).
 * The minor collections (`Scavenge`, `Minor Mark-Sweep`) and the major one (`Mark-Compact`) stop the
 * event loop; an `Incremental marking` entry spans marking that runs between turns of the loop, so it
 * is not a pause and is left out, as are weak callbacks.
 */
export function nodePauses(text: string): GcPause[] {
  const pauses: GcPause[] = [];
  for (const match of text.matchAll(/^\[bench-gc\] (\d+) ([\d.]+) ms (Scavenge|Minor Mark-Sweep|Mark-Compact)$/gm)) {
    const ms = Number(match[2]);
    pauses.push({ ms, kind: match[3] as string, atMs: Number(match[1]) + ms });
  }
  return pauses;
}

export function summarizePauses(process: string, pauses: GcPause[], keep = 3): GcSummary {
  const longest = [...pauses].sort((a, b) => b.ms - a.ms).slice(0, keep);
  return {
    process,
    pauses: pauses.length,
    totalMs: Math.round(pauses.reduce((sum, pause) => sum + pause.ms, 0)),
    longest: longest.map((pause) => ({ ...pause, ms: Math.round(pause.ms * 10) / 10 })),
  };
}

/** A log file read from an offset on: what was written since a scenario began. */
export class LogTail {
  private readonly offset: number;

  constructor(private readonly read: () => string) {
    this.offset = read().length;
  }

  static ofFile(path: string): LogTail {
    return new LogTail(() => (existsSync(path) ? readFileSync(path, 'utf8') : ''));
  }

  text(): string {
    return this.read().slice(this.offset);
  }
}
