import { randomUUID } from 'node:crypto';

export type RetryOptions = {
  /** How many times one call is sent again after a 429, a 503 or a network failure; 0 turns retries off (default 2). */
  maxRetries?: number;
  /** The first wait when the answer names none (no Retry-After); each further retry doubles it, with jitter (default 500). */
  initialRetryDelayMs?: number;
  /** The longest backoff wait of our own (default 8000). */
  maxRetryDelayMs?: number;
  /** A Retry-After longer than this is not waited out: the 429 or 503 is returned to the caller (default 60000). */
  maxRetryAfterMs?: number;
};

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/** HTTP's idempotent methods: sending one again after a lost answer changes nothing more. */
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/**
 * A fetch that gives every POST an Idempotency-Key (a UUID, unless the caller set one) and sends
 * the same request again, with that same key, when the API answers 429 or 503 (after its
 * Retry-After) or when the connection failed before an answer came. A network failure is retried
 * only where a repeat is safe: an idempotent method, or a request carrying an Idempotency-Key,
 * which the gateway answers once and replays. A 409 with Retry-After on a keyed request means our
 * own earlier attempt is still running: it is waited for the same way.
 */
export function retryingFetch(
  send: (request: Request) => Promise<Response>,
  options: RetryOptions = {},
): (request: Request) => Promise<Response> {
  const maxRetries = options.maxRetries ?? 2;
  const initialDelay = options.initialRetryDelayMs ?? 500;
  const maxDelay = options.maxRetryDelayMs ?? 8000;
  const maxRetryAfter = options.maxRetryAfterMs ?? 60_000;
  const backoff = (retry: number) => {
    const ceiling = Math.min(maxDelay, initialDelay * 2 ** retry);
    // Equal jitter: never less than half the step, so that clients that failed together spread out.
    return ceiling / 2 + Math.random() * (ceiling / 2);
  };

  return async (request) => {
    const method = request.method.toUpperCase();
    const headers = new Headers(request.headers);
    if (method === 'POST' && !headers.has(IDEMPOTENCY_KEY_HEADER)) headers.set(IDEMPOTENCY_KEY_HEADER, randomUUID());
    const keyed = headers.has(IDEMPOTENCY_KEY_HEADER);
    // A body can be read once: kept as bytes so that each attempt sends the same ones.
    const body = method === 'GET' || method === 'HEAD' ? undefined : await request.arrayBuffer();
    for (let retry = 0; ; retry++) {
      const attempt = new Request(request.url, { method, headers, body, signal: request.signal, redirect: request.redirect });
      let response: Response;
      try {
        response = await send(attempt);
      } catch (error) {
        if (retry >= maxRetries || request.signal.aborted || !(IDEMPOTENT_METHODS.has(method) || keyed)) throw error;
        await pause(backoff(retry), request.signal);
        continue;
      }
      const wait = waitBeforeRetry(response, keyed, backoff(retry));
      if (wait === undefined || wait > maxRetryAfter || retry >= maxRetries) return response;
      await response.body?.cancel(); // frees the connection for the next attempt
      await pause(wait, request.signal);
    }
  };
}

/** How long to wait before sending again, or undefined when this answer is final. */
function waitBeforeRetry(response: Response, keyed: boolean, backoff: number): number | undefined {
  const retryAfter = retryAfterMs(response.headers.get('retry-after'));
  if (response.status === 429 || response.status === 503) return retryAfter ?? backoff;
  if (response.status === 409 && keyed && retryAfter !== undefined) return retryAfter;
  return undefined;
}

/** Retry-After as delay-seconds or as an HTTP date (RFC 9110 §10.2.3), in milliseconds. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
