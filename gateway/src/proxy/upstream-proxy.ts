import { Agent, type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { errorResponseBody, KeyedCircuits, type Logger } from '@affiliate/platform';
import { createProxyMiddleware, type RequestHandler as ProxyHandler } from 'http-proxy-middleware';

/** A response the gateway keeps (idempotency) before the client sees it. */
export type CapturedResponse = { status: number; headers: Record<string, string | string[]>; body: Buffer };

export type ForwardOptions = {
  /** The program the request is for: its timeouts count against its own circuit only. */
  programId: string;
  /** Replaces whatever the client sent under these names: program scope and credentials come from the gateway only. */
  headers: Record<string, string>;
  /** The request body, already read (bounded) by the gateway; it is re-sent as is. */
  body?: Buffer;
  /** When set, the upstream answer is handed over before it is written to the client. */
  capture?: (response: CapturedResponse) => Promise<void>;
  /** Runs before the 503 is written when the upstream could not answer. */
  onUnavailable?: () => Promise<void>;
  /** The error shape of the route (DELETE /coupons and PUT /referrals number their errors). */
  errorShape?: unknown;
};

export type UpstreamProxy = {
  name: string;
  url: string;
  forward: (request: IncomingMessage, response: ServerResponse, options: ForwardOptions) => Promise<void>;
  shutdown: () => void;
};

export type UpstreamProxyOptions = {
  name: string;
  url: string;
  timeoutMs: number;
  resetTimeoutMs: number;
  logger: Logger;
};

// Never forwarded from the client: its credential, and anything it could use to pose as the gateway.
const CLIENT_HEADERS_DROPPED = ['authorization', 'cookie', 'x-internal-token', 'x-program-id', 'x-request-id', 'x-forwarded-prefix'];
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'upgrade', 'proxy-connection', 'te', 'trailer']);

type InFlight = ForwardOptions & { settle: (error?: Error) => void; timedOut: boolean };

/** No answer within the timeout: named, so the log says which it was. */
class UpstreamTimeoutError extends Error {}

/**
 * One upstream: http-proxy-middleware does the proxying; opossum circuit breakers around it make a
 * dead service answer 503 at once instead of tying up sockets and memory for the whole timeout.
 *
 * What a circuit counts, and whose circuit it is, decide who can open it. Only what says the
 * upstream is unwell counts: a connection that cannot be made or is cut, and no answer within the
 * timeout. Any answer, 4xx or 5xx, proves it alive and counts for nothing (a 5xx is often one
 * payload's fault). And each program has its own circuit per upstream: a timeout may be one
 * request's doing (a slow subscriber, a heavy query), so a tenant can open a circuit for itself,
 * never for another. A service that is really down opens every program's circuit after a few of
 * that program's requests.
 */
export function createUpstreamProxy(options: UpstreamProxyOptions): UpstreamProxy {
  const inFlight = new WeakMap<IncomingMessage, InFlight>();

  const handlers = {
    proxyReq: (proxyRequest: ClientRequest, request: IncomingMessage) => {
      const pending = inFlight.get(request);
      if (!pending) return;
      // http-proxy aborts on proxyTimeout and reports a plain "socket hang up": note why first.
      proxyRequest.once('timeout', () => {
        pending.timedOut = true;
      });
      for (const name of CLIENT_HEADERS_DROPPED) proxyRequest.removeHeader(name);
      for (const [name, value] of Object.entries(pending.headers)) proxyRequest.setHeader(name, value);
      if (pending.body) {
        // The body was read (and decompressed) by the gateway, so it goes out as a plain, sized body.
        proxyRequest.removeHeader('transfer-encoding');
        proxyRequest.removeHeader('content-encoding');
        proxyRequest.setHeader('content-length', pending.body.length);
        if (pending.body.length > 0) proxyRequest.write(pending.body);
      }
    },
    proxyRes: (upstreamResponse: IncomingMessage, request: IncomingMessage, response: ServerResponse) => {
      // The upstream's `Keep-Alive: timeout=…` describes our pooled connection to it, not the client's
      // connection to us: passed on, it makes clients keep sockets longer than we do and lose requests.
      delete upstreamResponse.headers['keep-alive'];
      const pending = inFlight.get(request);
      if (!pending) return;
      if (!pending.capture) return pending.settle();
      const chunks: Buffer[] = [];
      upstreamResponse.on('data', (chunk: Buffer) => chunks.push(chunk));
      upstreamResponse.on('error', (error) => pending.settle(error));
      upstreamResponse.on('end', () => {
        const captured: CapturedResponse = { status: upstreamResponse.statusCode ?? 502, headers: endToEndHeaders(upstreamResponse), body: Buffer.concat(chunks) };
        const write = () => {
          writeCaptured(response, captured);
          pending.settle();
        };
        pending.capture!(captured).then(write, (error: unknown) => {
          options.logger.error({ err: error, upstream: options.name }, 'could not store the response of an idempotent request');
          write();
        });
      });
    },
    error: (error: Error, request: IncomingMessage) => {
      const pending = inFlight.get(request);
      pending?.settle(pending.timedOut ? new UpstreamTimeoutError(`${options.name} did not answer within ${options.timeoutMs} ms`) : error);
    },
    econnreset: (_error: Error, request: IncomingMessage) => inFlight.get(request)?.settle(),
  };

  // Without an agent http-proxy opens a new connection per request and sends `Connection: close`,
  // which the client then sees too; a keep-alive pool per upstream avoids both.
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const proxyOptions = { target: options.url, proxyTimeout: options.timeoutMs, changeOrigin: false, agent };
  const streaming: ProxyHandler = createProxyMiddleware({ ...proxyOptions, on: handlers });
  const capturing: ProxyHandler = createProxyMiddleware({ ...proxyOptions, selfHandleResponse: true, on: handlers });

  const send = (request: IncomingMessage, response: ServerResponse, forward: ForwardOptions) =>
    new Promise<void>((resolve, reject) => {
      let settled = false;
      const settle = (error?: Error) => {
        if (settled) return;
        settled = true;
        inFlight.delete(request);
        if (error) reject(error);
        else resolve();
      };
      inFlight.set(request, { ...forward, settle, timedOut: false });
      // A client that goes away must not leave the breaker waiting for an outcome.
      response.once('close', () => settle());
      const proxy = forward.capture ? capturing : streaming;
      void proxy(request, response, (error?: unknown) => settle(error instanceof Error ? error : new Error('the request was not proxied')));
    });

  const circuits = new KeyedCircuits(
    send,
    {
      name: options.name,
      keyName: 'programId',
      openedMeans: "this program's requests fail fast",
      timeout: false, // proxyTimeout bounds each request and frees its socket
      errorThresholdPercentage: 50,
      volumeThreshold: 3,
      resetTimeout: options.resetTimeoutMs,
      rollingCountTimeout: 10_000,
    },
    options.logger,
  );

  return {
    name: options.name,
    url: options.url,
    async forward(request, response, forward) {
      const circuit = circuits.of(forward.programId);
      try {
        await circuit.fire(request, response, forward);
      } catch (error) {
        options.logger.warn({ err: error, upstream: options.name, programId: forward.programId, open: circuit.opened }, 'upstream unavailable');
        await forward.onUnavailable?.().catch((cleanupError: unknown) => options.logger.error({ err: cleanupError }, 'cleanup after an upstream failure failed'));
        if (response.headersSent) {
          response.destroy();
          return;
        }
        const message = `The ${options.name} service is unavailable; retry later`;
        response.statusCode = 503;
        response.setHeader('content-type', 'application/json; charset=utf-8');
        response.setHeader('retry-after', String(Math.ceil(options.resetTimeoutMs / 1000)));
        response.end(JSON.stringify(errorResponseBody(503, message, forward.errorShape)));
      }
    },
    shutdown: () => {
      circuits.shutdown();
      agent.destroy();
    },
  };
}

function endToEndHeaders(upstreamResponse: IncomingMessage): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(upstreamResponse.headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
  }
  return headers;
}

export function writeCaptured(response: ServerResponse, captured: CapturedResponse): void {
  if (response.headersSent || response.destroyed) return;
  response.statusCode = captured.status;
  for (const [name, value] of Object.entries(captured.headers)) response.setHeader(name, value);
  response.setHeader('content-length', captured.body.length);
  response.end(captured.body);
}
