import type { GcPause } from './gc-log';
import { round } from './stats';
import { SPAN_KIND, type CollectedSpan } from './trace-collector';

export const HOPS = ['stored → published', 'published → consumed', 'consumed → attempted', 'attempted → answered'] as const;
export type Hop = (typeof HOPS)[number];

/** One traced event: its trace, and the bench's own instants (ms since the epoch). */
export type TracedEvent = { traceId: string; acceptedMs: number; answeredMs: number };

export type SlowEvent = {
  /** From the 200 of POST /affiliates to the verified webhook at the subscriber. */
  latencyMs: number;
  hopsMs: Record<Hop, number | null>;
  /** The longest database call in the trace, where the time of a hop usually goes. */
  longestCall: string | null;
  /** The longest pause of the database server's JVM that overlapped the event's way (stored to answered). */
  databaseGcPauseMs: number | null;
};

export type TailBreakdown = {
  traced: number;
  /** Traced events whose every hop was found in the spans. */
  resolved: number;
  /** The slowest 1% of the traced events (at least 5). */
  slowest: number;
  hops: Array<{ hop: Hop; p50AllMs: number | null; medianSlowestMs: number | null; maxSlowestMs: number | null }>;
  /** The ten slowest, slowest first. */
  events: SlowEvent[];
};

const isDatabaseCall = (span: CollectedSpan) =>
  span.attributes['db.system'] === 'mongodb' || span.attributes['db.system.name'] === 'mongodb';
const urlOf = (span: CollectedSpan) => String(span.attributes['url.full'] ?? span.attributes['http.url'] ?? '');

/**
 * The instants of one event from its spans: stored (the end of the last database write of the
 * process that published, before it published), published (the producer span ends at the broker's
 * confirm, or the message's arrival at the dispatcher if that was earlier), consumed (the dispatcher's consumer span starts when the message arrives), attempted
 * (the dispatcher's request to the subscriber starts); answered is the bench's own arrival time.
 */
function instantsOf(spans: CollectedSpan[], subscriberUrl: string, answeredMs: number) {
  const first = (list: CollectedSpan[], by: (span: CollectedSpan) => number) => list.sort((a, b) => by(a) - by(b))[0];
  const producer = first(
    spans.filter((span) => span.kind === SPAN_KIND.producer),
    (span) => span.startMs,
  );
  const attempt = first(
    spans.filter((span) => span.kind === SPAN_KIND.client && urlOf(span).startsWith(subscriberUrl)),
    (span) => span.startMs,
  );
  const consumer =
    attempt &&
    first(
      spans.filter((span) => span.kind === SPAN_KIND.consumer && span.service === attempt.service),
      (span) => span.startMs,
    );
  const write =
    producer &&
    first(
      spans.filter((span) => isDatabaseCall(span) && span.service === producer.service && span.endMs <= producer.startMs + 1),
      (span) => -span.endMs,
    );
  const stored = write?.endMs ?? spans.find((span) => span.kind === SPAN_KIND.server && span.service === producer?.service)?.endMs;
  // The producer span ends when the relay's process sees the confirm, which waits for its event loop;
  // the broker had the message by the time the dispatcher received it, whichever is earlier.
  const published = producer && consumer ? Math.min(producer.endMs, consumer.startMs) : producer?.endMs;
  return { stored, published, consumed: consumer?.startMs, attempted: attempt?.startMs, answered: answeredMs };
}

const median = (values: number[]): number | null => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] as number;
};

/** The per-hop breakdown of the slowest 1% of the traced events, beside the median of all of them. */
export function tailBreakdown(
  events: TracedEvent[],
  spansOf: (traceId: string) => CollectedSpan[],
  subscriberUrl: string,
  databasePauses: GcPause[],
): TailBreakdown {
  const analysed = events.map((event) => {
    const spans = spansOf(event.traceId);
    const at = instantsOf(spans, subscriberUrl, event.answeredMs);
    const gap = (from: number | undefined, to: number | undefined) => (from === undefined || to === undefined ? null : round(to - from, 1));
    const hopsMs: Record<Hop, number | null> = {
      'stored → published': gap(at.stored, at.published),
      'published → consumed': gap(at.published, at.consumed),
      'consumed → attempted': gap(at.consumed, at.attempted),
      'attempted → answered': gap(at.attempted, at.answered),
    };
    const longest = spans.filter(isDatabaseCall).sort((a, b) => b.endMs - b.startMs - (a.endMs - a.startMs))[0];
    const from = at.stored ?? event.acceptedMs;
    const overlapping = databasePauses.filter(
      (pause) => pause.atMs !== undefined && pause.atMs >= from && pause.atMs - pause.ms <= event.answeredMs,
    );
    return {
      latencyMs: round(event.answeredMs - event.acceptedMs, 1),
      hopsMs,
      longestCall: longest ? `${longest.service}: ${longest.name} ${round(longest.endMs - longest.startMs, 1)} ms` : null,
      databaseGcPauseMs: overlapping.length > 0 ? round(Math.max(...overlapping.map((pause) => pause.ms)), 1) : null,
    };
  });
  const resolved = analysed.filter((event) => HOPS.every((hop) => event.hopsMs[hop] !== null));
  const bySlowness = [...analysed].sort((a, b) => b.latencyMs - a.latencyMs);
  const slowest = bySlowness.slice(0, Math.max(5, Math.ceil(analysed.length / 100)));
  const known = (list: SlowEvent[], hop: Hop) => list.map((event) => event.hopsMs[hop]).filter((value): value is number => value !== null);
  return {
    traced: events.length,
    resolved: resolved.length,
    slowest: slowest.length,
    hops: HOPS.map((hop) => ({
      hop,
      p50AllMs: median(known(analysed, hop)),
      medianSlowestMs: median(known(slowest, hop)),
      maxSlowestMs: known(slowest, hop).length > 0 ? Math.max(...known(slowest, hop)) : null,
    })),
    events: bySlowness.slice(0, 10),
  };
}

/** The breakdown as lines for the bench's log. */
export function describeBreakdown(breakdown: TailBreakdown): string[] {
  const ms = (value: number | null) => (value === null ? 'n/a' : `${value}`);
  return [
    `slowest ${breakdown.slowest} of ${breakdown.traced} traced events (${breakdown.resolved} with every hop found), median / max per hop, and the median of all traced:`,
    ...breakdown.hops.map(
      (hop) =>
        `  ${hop.hop.padEnd(22)} ${ms(hop.medianSlowestMs).padStart(8)} / ${ms(hop.maxSlowestMs).padStart(8)} ms   (all: ${ms(hop.p50AllMs)} ms)`,
    ),
    ...breakdown.events
      .slice(0, 5)
      .map(
        (event) =>
          `  ${event.latencyMs} ms: ${HOPS.map((hop) => ms(event.hopsMs[hop])).join(' + ')}; longest database call ${event.longestCall ?? 'n/a'}; database GC pause in its way ${ms(event.databaseGcPauseMs)} ms`,
      ),
  ];
}
