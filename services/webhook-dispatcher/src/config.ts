import { booleanSetting } from '@affiliate/platform';
import { z } from 'zod';

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
  WEBHOOK_DISABLE_AFTER: duration('5d'),
  WEBHOOK_SECRET_OVERLAP: duration('24h'),
  /** Events of one program held at once in the window of events taken from the broker (all programs share 10,000). */
  WEBHOOK_FAN_OUT_WINDOW_PER_PROGRAM: z.coerce.number().int().min(1).default(1000),
};

export type DispatcherSettings = {
  allowPrivateUrls: boolean;
  /** Off: an answer from a private address is logged as status and size only, never its content. */
  showPrivateResponses: boolean;
  retryScheduleMs: number[];
  timeoutMs: number;
  /** The subscriber's time to answer a test send, which a client waits on through the gateway. */
  testTimeoutMs: number;
  pollIntervalMs: number;
  /** Attempts in flight at once to one endpoint, so a slow one cannot take every slot. */
  endpointConcurrency: number;
  /** Attempts in flight at once in this process. */
  maxInFlight: number;
  /** An endpoint failing without a success for this long is disabled. */
  disableAfterMs: number;
  /** How long the previous secret keeps signing after a rotation. */
  secretOverlapMs: number;
  /** Longest Retry-After honoured; a longer one is cut to this. */
  maxRetryAfterMs: number;
  breaker: { errorThresholdPercentage: number; volumeThreshold: number; resetTimeoutMs: number };
  /** Events of one program held at once in the fan-out window; more go back to the end of the queue. */
  fanOutWindowPerProgram: number;
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
    disableAfterMs: config.WEBHOOK_DISABLE_AFTER,
    secretOverlapMs: config.WEBHOOK_SECRET_OVERLAP,
    fanOutWindowPerProgram: config.WEBHOOK_FAN_OUT_WINDOW_PER_PROGRAM,
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
  disableAfterMs: 5 * 86_400_000,
  secretOverlapMs: 86_400_000,
  maxRetryAfterMs: 86_400_000,
  breaker: { errorThresholdPercentage: 50, volumeThreshold: 10, resetTimeoutMs: 30_000 },
  fanOutWindowPerProgram: 1000,
};
