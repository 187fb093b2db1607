import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { guardedLookup, isPrivateAddress, refusedLiteral } from '../domain/subscriber-address';

/** Response bodies are kept up to this size in the delivery log. */
export const RESPONSE_EXCERPT_BYTES = 50 * 1024;

/** Idle kept-alive sockets kept to one subscriber origin (scheme, host and port) at most. */
export const DEFAULT_SOCKETS_PER_ORIGIN = 64;

const STALE_SOCKET = Symbol('stale socket');

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

/**
 * An idle kept-alive socket is closed after this long: below the 5 s keep-alive timeout of node's
 * own server (and most frameworks'), so the pool rarely hands out a socket the subscriber is closing.
 */
const IDLE_SOCKET_MS = 4_000;

/** How a reused socket the subscriber closed as the request went out fails. */
const isResetOrBrokenPipe = (error: unknown) => ['ECONNRESET', 'EPIPE'].includes((error as { code?: string }).code ?? '');

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
 *
 * Connections are kept alive and reused, a pool per origin (node's Agent keys its sockets by host and
 * port) keeping at most `socketsPerOrigin` idle ones. Sockets in use are not bounded here: the callers
 * bound the attempts in flight (the scheduler: `maxInFlight` in all, `endpointConcurrency` per
 * endpoint), so a request never waits in the Agent for a socket another endpoint or program holds,
 * and the timeout bounds the attempt itself, never a wait in line before it. The SSRF check
 * stays at connect time: every new socket resolves its host through the guarded lookup, and a reused
 * one goes to the address that was checked when it connected. The pools belong to this client, so a
 * socket opened where private addresses are allowed is never handed to a client that refuses them.
 */
export function createSubscriberClient(options: {
  timeoutMs: number;
  allowPrivateUrls: boolean;
  showPrivateResponses: boolean;
  socketsPerOrigin?: number;
}): SubscriberClient {
  const lookup = guardedLookup(options.allowPrivateUrls);
  const inFlight = new Set<AbortController>();
  const pool = {
    keepAlive: true,
    // No maxSockets (node's default, no bound): see above.
    maxFreeSockets: options.socketsPerOrigin ?? DEFAULT_SOCKETS_PER_ORIGIN,
    timeout: IDLE_SOCKET_MS,
    lookup,
  };
  const agents = { http: new http.Agent(pool), https: new https.Agent(pool) };

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
      // A kept-alive socket the subscriber closed just as this request went out fails before any
      // answer: sent once more, on a fresh socket, as node's documentation advises. The one case
      // where one attempt sends the request twice: a subscriber that read it before closing sees the
      // webhook twice, with the same webhook-id (at-least-once, as after any failed attempt).
      let outcome = await post(target, request, controller, finish, false);
      if (outcome === STALE_SOCKET) outcome = await post(target, request, controller, finish, true);
      return outcome === STALE_SOCKET ? finish({ error: 'the connection was reset' }) : outcome;
    } finally {
      clearTimeout(timer);
      inFlight.delete(controller);
    }
  };

  const post = (
    target: URL,
    request: WebhookRequest,
    controller: AbortController,
    finish: (fields: Partial<SendOutcome>) => SendOutcome,
    freshSocket: boolean,
  ): Promise<SendOutcome | typeof STALE_SOCKET> =>
    new Promise((resolve) => {
      const secure = target.protocol === 'https:';
      // Whether anything of an answer came: then the request was read, and it is never sent again.
      let answered = false;
      let socket: Socket | undefined;
      let bytesBefore = 0;
      const outgoing = (secure ? https : http).request(
        target,
        {
          method: 'POST',
          headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
          lookup,
          // The retry after a stale socket opens its own (checked at connect like any other).
          agent: freshSocket ? false : secure ? agents.https : agents.http,
          signal: controller.signal,
        },
        (response) => {
          answered = true;
          // Read now: once the answer is read, a kept-alive socket goes back to the pool, off the response.
          const withheld = !options.showPrivateResponses && isPrivateAddress(response.socket.remoteAddress ?? '');
          void readExcerpt(response, controller.signal).then(({ excerpt, bytes, error }) => {
            const statusCode = response.statusCode ?? null;
            const throttled = statusCode === 429 || statusCode === 503;
            resolve(
              finish({
                statusCode,
                responseExcerpt: withheld ? null : excerpt,
                responseBytes: bytes,
                error,
                retryAfterMs: throttled ? retryAfterMs(response.headers['retry-after']) : null,
              }),
            );
          });
        },
      );
      // A reused socket has read the earlier answers on it: only bytes beyond those are this one's.
      outgoing.on('socket', (assigned) => {
        socket = assigned;
        bytesBefore = assigned.bytesRead;
      });
      outgoing.on('error', (error) => {
        // Once an answer began, reading it settles the outcome (an answer cut off is logged as such).
        if (answered) return;
        const nothingRead = socket === undefined || socket.bytesRead === bytesBefore;
        if (!controller.signal.aborted && outgoing.reusedSocket && nothingRead && isResetOrBrokenPipe(error)) return resolve(STALE_SOCKET);
        const reason: unknown = controller.signal.aborted ? controller.signal.reason : error;
        resolve(finish({ error: reason instanceof Error ? reason.message : String(reason) }));
      });
      outgoing.end(request.body);
    });

  return {
    send,
    abortAll: () => {
      for (const controller of inFlight) controller.abort(new Error('the dispatcher is shutting down'));
      // The idle kept-alive sockets go too: nothing holds the process open after a stop.
      agents.http.destroy();
      agents.https.destroy();
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
