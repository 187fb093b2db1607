import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { guardedLookup, isPrivateAddress, refusedLiteral } from '../domain/subscriber-address';

/** Response bodies are kept up to this size in the delivery log. */
export const RESPONSE_EXCERPT_BYTES = 50 * 1024;

export type WebhookRequest = {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Shorter than the client's own timeout when a caller is waiting on the answer (a test send). */
  timeoutMs?: number;
};

export type SendOutcome = {
  at: Date;
  statusCode: number | null;
  latencyMs: number;
  /** What the subscriber answered, kept only from a public address: a private one (allowed only
   * explicitly) could be any local service, and the log must not become a way to read it. */
  responseExcerpt: string | null;
  /** Bytes of the answer that were read (at most RESPONSE_EXCERPT_BYTES). */
  responseBytes: number | null;
  error: string | null;
  /** From a Retry-After header on 429 or 503. */
  retryAfterMs: number | null;
};

export const isDelivered = (outcome: SendOutcome) => outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;

export type SubscriberClient = {
  send(request: WebhookRequest): Promise<SendOutcome>;
  /** Aborts every request in flight (shutdown): their deliveries are tried again later. */
  abortAll(): void;
};

/** Retry-After is either seconds or an HTTP date. */
export function retryAfterMs(header: string | undefined, now = Date.now()): number | null {
  if (!header) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/**
 * POSTs one webhook with node's http client: redirects are never followed (a 3xx is a failed
 * attempt), the whole exchange is bounded by the timeout, the destination is checked at connect
 * time, and at most 50 KB of the answer is read. It never throws: every outcome is an attempt to log.
 */
export function createSubscriberClient(options: {
  timeoutMs: number;
  allowPrivateUrls: boolean;
  showPrivateResponses: boolean;
}): SubscriberClient {
  const lookup = guardedLookup(options.allowPrivateUrls);
  const inFlight = new Set<AbortController>();

  const send = async (request: WebhookRequest): Promise<SendOutcome> => {
    const at = new Date();
    const started = performance.now();
    const finish = (fields: Partial<SendOutcome>): SendOutcome => ({
      at,
      statusCode: null,
      latencyMs: Math.round(performance.now() - started),
      responseExcerpt: null,
      responseBytes: null,
      error: null,
      retryAfterMs: null,
      ...fields,
    });
    const target = new URL(request.url);
    const refused = refusedLiteral(target, options.allowPrivateUrls);
    if (refused) return finish({ error: `not sent: ${refused}` });

    const controller = new AbortController();
    inFlight.add(controller);
    const timeoutMs = Math.min(request.timeoutMs ?? options.timeoutMs, options.timeoutMs);
    const timer = setTimeout(() => controller.abort(new Error(`no complete answer within ${timeoutMs} ms`)), timeoutMs);
    try {
      return await new Promise<SendOutcome>((resolve) => {
        const transport = target.protocol === 'https:' ? https : http;
        const outgoing = transport.request(
          target,
          {
            method: 'POST',
            headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
            lookup,
            agent: false,
            signal: controller.signal,
          },
          (response) =>
            readExcerpt(response, controller.signal).then(({ excerpt, bytes, error }) => {
              const statusCode = response.statusCode ?? null;
              const throttled = statusCode === 429 || statusCode === 503;
              const withheld = !options.showPrivateResponses && isPrivateAddress(response.socket.remoteAddress ?? '');
              resolve(
                finish({
                  statusCode,
                  responseExcerpt: withheld ? null : excerpt,
                  responseBytes: bytes,
                  error,
                  retryAfterMs: throttled ? retryAfterMs(response.headers['retry-after']) : null,
                }),
              );
            }),
        );
        outgoing.on('error', (error) => {
          const reason: unknown = controller.signal.aborted ? controller.signal.reason : error;
          resolve(finish({ error: reason instanceof Error ? reason.message : String(reason) }));
        });
        outgoing.end(request.body);
      });
    } finally {
      clearTimeout(timer);
      inFlight.delete(controller);
    }
  };

  return {
    send,
    abortAll: () => {
      for (const controller of inFlight) controller.abort(new Error('the dispatcher is shutting down'));
    },
  };
}

/** Reads at most RESPONSE_EXCERPT_BYTES and then lets the rest go; an answer cut short keeps what arrived. */
function readExcerpt(
  response: IncomingMessage,
  signal: AbortSignal,
): Promise<{ excerpt: string | null; bytes: number; error: string | null }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (error: string | null) => {
      if (settled) return;
      settled = true;
      const excerpt = Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8');
      resolve({ excerpt: size === 0 ? null : excerpt, bytes: Math.min(size, RESPONSE_EXCERPT_BYTES), error });
    };
    response.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= RESPONSE_EXCERPT_BYTES) {
        settle(null);
        response.destroy();
      }
    });
    response.on('end', () => settle(null));
    response.on('error', () => {
      const reason: unknown = signal.reason;
      settle(signal.aborted && reason instanceof Error ? reason.message : 'the answer was cut off');
    });
    response.on('close', () => settle(response.complete ? null : 'the answer was cut off'));
  });
}
