import { DEFAULT_EVENT_RETENTION_DAYS, MAX_WEBHOOK_ENDPOINTS_CEILING } from '@affiliate/contracts';
import { booleanSetting } from '@affiliate/platform';
import { z } from 'zod';
import { DEFAULT_SOCKETS_PER_ORIGIN } from './data-access/subscriber-client';

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `0`, `200ms`, `5s`, `5m`, `2h`, `1d` → milliseconds; undefined when the text is not a duration. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(text.trim());
  if (!match) return undefined;
  return Math.round(Number(match[1]) * UNIT_MS[(match[2] ?? 'ms') as keyof typeof UNIT_MS]);
}

const duration = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((text, context) => {
      const milliseconds = parseDuration(text);
      if (milliseconds === undefined) {
        context.addIssue({ code: 'custom', message: `"${text}" is not a duration such as 200ms, 5s, 5m, 2h or 1d` });
        return z.NEVER;
      }
      return milliseconds;
    });

const schedule = z
  .string()
  .default('0,5s,5m,30m,2h,5h,10h,14h,20h,24h')
  .transform((text, context) => {
    const steps = text.split(',').map(parseDuration);
    if (steps.length === 0 || steps.some((step) => step === undefined)) {
      context.addIssue({ code: 'custom', message: 'must be comma-separated durations, e.g. 0,5s,5m,30m,2h' });
      return z.NEVER;
    }
    return steps as number[];
  });

/** The development key for webhook secrets at rest: in this repository, so production refuses it. */
export const LOCAL_WEBHOOK_SECRET_ENCRYPTION_KEY = 'f3a1c2d4e5b60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9a';

/** 32 bytes as 64 hex characters or base64 (`openssl rand -hex 32`, `openssl rand -base64 32`). */
const encryptionKey = z
  .string()
  .default(LOCAL_WEBHOOK_SECRET_ENCRYPTION_KEY)
  .transform((text, context) => {
    const trimmed = text.trim();
    const key = /^[0-9a-f]{64}$/i.test(trimmed)
      ? Buffer.from(trimmed, 'hex')
      : /^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)
        ? Buffer.from(trimmed, 'base64')
        : null;
    if (!key || key.length !== 32) {
      context.addIssue({
        code: 'custom',
        message: 'must be 32 bytes, as 64 hex characters or base64; generate one with `openssl rand -hex 32`',
      });
      return z.NEVER;
    }
    // 32 random bytes hold about 31 distinct values; fewer than 16 is a made-up key (all zeros, a repeated word).
    if (new Set(key).size < 16) {
      context.addIssue({
        code: 'custom',
        message: 'is not random enough (too few distinct bytes); generate one with `openssl rand -hex 32`',
      });
      return z.NEVER;
    }
    return key;
  });

/** As many deliveries per event as a program has endpoints by default (maxWebhookEndpoints, 20). */
export const DEFAULT_MAX_DELIVERIES_PER_EVENT = 20;

/** This service's own environment (DESIGN.md §5), on top of the platform's. */
export const dispatcherConfigShape = {
  /** Lets subscriber URLs resolve to private, loopback and link-local addresses (tests, local runs). */
  WEBHOOK_ALLOW_PRIVATE_URLS: booleanSetting.default('false'),
  /** Shows what private subscribers answered in the delivery log and test results (local development only). */
  WEBHOOK_SHOW_PRIVATE_RESPONSES: booleanSetting.default('false'),
  /** Delay before each attempt, the first one counted from the event: attempts = number of entries. */
  WEBHOOK_RETRY_SCHEDULE: schedule,
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(15_000),
  /** A test send is answered while the caller waits: keep it under the gateway's UPSTREAM_TIMEOUT_MS (10 s). */
  WEBHOOK_TEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5_000),
  WEBHOOK_POLL_INTERVAL_MS: z.coerce.number().int().min(10).max(60_000).default(500),
  WEBHOOK_ENDPOINT_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(20),
  /** Idle kept-alive connections kept to one subscriber origin (scheme, host, port) at most; those in use are bounded by the attempts in flight. */
  WEBHOOK_SOCKETS_PER_ORIGIN: z.coerce.number().int().min(1).max(1000).default(DEFAULT_SOCKETS_PER_ORIGIN),
  WEBHOOK_DISABLE_AFTER: duration('5d'),
  WEBHOOK_SECRET_OVERLAP: duration('24h'),
  /** AES-256-GCM key of the signing secrets at rest; required in production. */
  WEBHOOK_SECRET_ENCRYPTION_KEY: encryptionKey,
  /** How long a delivery to a PER_OBJECT endpoint waits for an earlier revision of its object that has not arrived. */
  WEBHOOK_ORDERING_GAP_WAIT: duration('10s'),
  /** Events of one program held at once in the window of events taken from the broker (all programs share 10,000). */
  WEBHOOK_FAN_OUT_WINDOW_PER_PROGRAM: z.coerce.number().int().min(1).default(1000),
  /** Deliveries one event fans out to in a program (active endpoints subscribed to one event type), at most the highest endpoint cap. */
  WEBHOOK_MAX_DELIVERIES_PER_EVENT: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_WEBHOOK_ENDPOINTS_CEILING)
    .default(DEFAULT_MAX_DELIVERIES_PER_EVENT),
  /** Days the public events are kept for GET /events, backfills, replays and the signature check. */
  EVENT_RETENTION_DAYS: z.coerce.number().int().min(1).max(365).default(DEFAULT_EVENT_RETENTION_DAYS),
  /** How often the dispatcher deletes events past their retention itself (the local server has no TTL monitor). */
  EVENT_SWEEP_INTERVAL: duration('1h'),
};

/** Refused in production when missing or shipped, as every secret of the platform. */
export const DISPATCHER_SECRETS = ['WEBHOOK_SECRET_ENCRYPTION_KEY'] as const;

export type DispatcherSettings = {
  allowPrivateUrls: boolean;
  /** Off: an answer from a private address is logged as status and size only, never its content. */
  showPrivateResponses: boolean;
  retryScheduleMs: number[];
  timeoutMs: number;
  /** The subscriber's time to answer a test send, which a client waits on through the gateway. */
  testTimeoutMs: number;
  pollIntervalMs: number;
  /** Requests open at once to one endpoint (until answered; the recording after it is not counted), so a slow one cannot take every slot. */
  endpointConcurrency: number;
  /** Attempts in flight at once in this process. */
  maxInFlight: number;
  /** Idle sockets kept to one subscriber origin (a pool per origin, connections reused); those in use are the attempts in flight. */
  socketsPerOrigin: number;
  /** An endpoint failing without a success for this long is disabled. */
  disableAfterMs: number;
  /** How long the previous secret keeps signing after a rotation. */
  secretOverlapMs: number;
  /** Seals the signing secrets at rest (32 bytes, AES-256-GCM). */
  secretEncryptionKey: Buffer;
  /** Longest Retry-After honoured; a longer one is cut to this. */
  maxRetryAfterMs: number;
  breaker: { errorThresholdPercentage: number; volumeThreshold: number; resetTimeoutMs: number };
  /** Events of one program held at once in the fan-out window; more go back to the end of the queue. */
  fanOutWindowPerProgram: number;
  /** Active endpoints of one program that one event type may reach: a subscription beyond it is a 400, and fan-out never passes it. */
  maxDeliveriesPerEvent: number;
  /**
   * On a PER_OBJECT endpoint, how long (from its arrival) a delivery waits for an earlier revision of
   * its object that the dispatcher has not seen: it may be on its way through another relay, or never
   * come (a change without an event, a type the endpoint does not take).
   */
  orderingGapWaitMs: number;
  /** How long a public event is kept after it occurred. */
  eventRetentionMs: number;
  eventSweepIntervalMs: number;
};

export function dispatcherSettings(config: z.infer<z.ZodObject<typeof dispatcherConfigShape>>): DispatcherSettings {
  return {
    ...DEFAULT_DISPATCHER_SETTINGS,
    allowPrivateUrls: config.WEBHOOK_ALLOW_PRIVATE_URLS,
    showPrivateResponses: config.WEBHOOK_SHOW_PRIVATE_RESPONSES,
    retryScheduleMs: config.WEBHOOK_RETRY_SCHEDULE,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    testTimeoutMs: config.WEBHOOK_TEST_TIMEOUT_MS,
    pollIntervalMs: config.WEBHOOK_POLL_INTERVAL_MS,
    endpointConcurrency: config.WEBHOOK_ENDPOINT_CONCURRENCY,
    socketsPerOrigin: config.WEBHOOK_SOCKETS_PER_ORIGIN,
    disableAfterMs: config.WEBHOOK_DISABLE_AFTER,
    secretOverlapMs: config.WEBHOOK_SECRET_OVERLAP,
    secretEncryptionKey: config.WEBHOOK_SECRET_ENCRYPTION_KEY,
    fanOutWindowPerProgram: config.WEBHOOK_FAN_OUT_WINDOW_PER_PROGRAM,
    maxDeliveriesPerEvent: config.WEBHOOK_MAX_DELIVERIES_PER_EVENT,
    orderingGapWaitMs: config.WEBHOOK_ORDERING_GAP_WAIT,
    eventRetentionMs: config.EVENT_RETENTION_DAYS * 86_400_000,
    eventSweepIntervalMs: Math.max(1000, config.EVENT_SWEEP_INTERVAL),
  };
}

export const DEFAULT_DISPATCHER_SETTINGS: DispatcherSettings = {
  allowPrivateUrls: false,
  showPrivateResponses: false,
  retryScheduleMs: [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000, 72_000_000, 86_400_000],
  timeoutMs: 15_000,
  testTimeoutMs: 5_000,
  pollIntervalMs: 500,
  endpointConcurrency: 20,
  maxInFlight: 200,
  socketsPerOrigin: DEFAULT_SOCKETS_PER_ORIGIN,
  disableAfterMs: 5 * 86_400_000,
  secretOverlapMs: 86_400_000,
  secretEncryptionKey: Buffer.from(LOCAL_WEBHOOK_SECRET_ENCRYPTION_KEY, 'hex'),
  maxRetryAfterMs: 86_400_000,
  breaker: { errorThresholdPercentage: 50, volumeThreshold: 10, resetTimeoutMs: 30_000 },
  fanOutWindowPerProgram: 1000,
  maxDeliveriesPerEvent: DEFAULT_MAX_DELIVERIES_PER_EVENT,
  orderingGapWaitMs: 10_000,
  eventRetentionMs: DEFAULT_EVENT_RETENTION_DAYS * 86_400_000,
  eventSweepIntervalMs: 3_600_000,
};
