import { Agent, ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { errorResponseBody, FairShare, KeyedCircuits, requestIdOf, type Logger, type Metrics } from '@affiliate/platform';
import { createProxyMiddleware, type RequestHandler as ProxyHandler } from 'http-proxy-middleware';
import { UpstreamTargets } from './upstream-targets';

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
  /** Runs before the 503 is written when the upstream could not answer; not when a `keepsAnswer` call goes on for its answer. */
  onUnavailable?: () => Promise<void>;
  /**
   * The answer is kept for retries (an Idempotency-Key): once the request is on a connected socket to
   * the service, the call runs to its end (for one more timeout at most) even when the client is
   * answered first (its deadline) or leaves, and the answer is captured when it comes. The service
   * may be doing the work, and that answer, not the gateway's 503, is what a retry with the same key
   * must get; releasing the key instead let the retry do the work a second time.
   */
  keepsAnswer?: boolean;
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
  /** One URL, or the service's replicas' separated by commas (called in turn, see UpstreamTargets). */
  url: string;
  timeoutMs: number;
  resetTimeoutMs: number;
  maxSockets?: number;
  maxInFlightPerProgram?: number;
  logger: Logger;
  metrics?: Metrics;
};

// Never forwarded from the client: its credential, and anything it could use to pose as the gateway.
const CLIENT_HEADERS_DROPPED = [
  'authorization',
  'cookie',
  'x-internal-token',
  'x-program-id',
  'x-request-id',
  'x-forwarded-prefix',
  'x-api-key-id',
  'x-api-key-prefix',
];
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'upgrade',
  'proxy-connection',
  'te',
  'trailer',
]);

type InFlight = ForwardOptions & {
  settle: (error?: Error) => void;
  /** The client was answered (or left) while a kept answer was still to come: it is captured, not written. */
  detached?: boolean;
  proxyRequest?: ClientRequest;
  /** The address this call went to, and how to send it again (to another one). */
  target?: string;
  again?: () => void;
};

/** No answer within the timeout: named, so the log says which it was. */
class UpstreamTimeoutError extends Error {}

/** No answer within the timeout, from a call that goes on for its kept answer (`keepsAnswer`). */
class AnswerAwaitedError extends UpstreamTimeoutError {}

/** A shed request may come back almost at once: connections free up in milliseconds. */
const RETRY_AFTER_BUSY_SECONDS = 1;

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
 *
 * The connections to the service are one pool for every program, so they are shared out here, not
 * by the HTTP agent: at most `maxSockets` calls at once, programs taking turns for a free one
 * (FairShare), at most `maxInFlightPerProgram` of one program's calls in flight (beyond: 503 with
 * Retry-After), and one deadline (`timeoutMs`) from the call's arrival that covers the wait for a
 * connection and the answer; past it the call is answered 503 and the upstream request aborted
 * (but for a call whose answer is kept for retries, `keepsAnswer`, which goes on for it).
 * The agent itself never makes a request wait: a request it queued would get its socket after its
 * headers were fixed, and no handler could set the gateway's credentials on it any more.
 */
export function createUpstreamProxy(options: UpstreamProxyOptions): UpstreamProxy {
  const inFlight = new WeakMap<IncomingMessage, InFlight>();
  const maxSockets = options.maxSockets ?? 256;
  const maxInFlightPerProgram = options.maxInFlightPerProgram ?? 64;
  const connections = new FairShare(maxSockets, (_running, queued) => options.metrics?.upstreams.waiting(options.name, queued));
  const callsByProgram = new Map<string, number>();
  /** Calls that go on after their client's response closed (`keepsAnswer`), by that response: over when the promise is. */
  const detachedCalls = new WeakMap<ServerResponse, Promise<void>>();
  /**
   * Runs `then` once the call is over: its response closed and, for a call that went on for a kept
   * answer, that answer in (or given up). Until then it holds its connection and its program's count.
   */
  const onceCallOver = (response: ServerResponse, then: () => void) =>
    onceClosed(response, () => {
      const detached = detachedCalls.get(response);
      if (detached) void detached.then(then);
      else then();
    });

  /**
   * Every handler runs on events of requests that may have been answered already (deadline, client
   * gone): whatever one throws fails that call with a 503, never the process.
   */
  const guarded =
    <Args extends [unknown, IncomingMessage, ...unknown[]]>(event: string, handler: (...args: Args) => void) =>
    (...args: Args) => {
      try {
        handler(...args);
      } catch (error) {
        options.logger.error({ err: error, upstream: options.name, event }, 'proxy event handler failed; the call is answered 503');
        const pending = inFlight.get(args[1]);
        if (pending) pending.settle(error instanceof Error ? error : new Error(String(error)));
        else if (args[0] instanceof ClientRequest) args[0].destroy();
      }
    };

  const handlers = {
    proxyReq: guarded('proxyReq', (proxyRequest: ClientRequest, request: IncomingMessage) => {
      const pending = inFlight.get(request);
      // The client was answered (deadline) or went away before the request left: send nothing.
      if (!pending) return void proxyRequest.destroy();
      pending.proxyRequest = proxyRequest;
      // Too late to put the gateway's credentials on it: fail the call rather than send it without them.
      if (proxyRequest.headersSent) throw new Error(`the request to ${options.name} was sent before the gateway could set its headers`);
      for (const name of CLIENT_HEADERS_DROPPED) proxyRequest.removeHeader(name);
      for (const [name, value] of Object.entries(pending.headers)) proxyRequest.setHeader(name, value);
      if (pending.body) {
        // The body was read (and decompressed) by the gateway, so it goes out as a plain, sized body.
        proxyRequest.removeHeader('transfer-encoding');
        proxyRequest.removeHeader('content-encoding');
        proxyRequest.setHeader('content-length', pending.body.length);
        if (pending.body.length > 0) proxyRequest.write(pending.body);
      }
    }),
    proxyRes: guarded('proxyRes', (upstreamResponse: IncomingMessage, request: IncomingMessage, response: ServerResponse) => {
      // The upstream's `Keep-Alive: timeout=…` describes our pooled connection to it, not the client's
      // connection to us: passed on, it makes clients keep sockets longer than we do and lose requests.
      delete upstreamResponse.headers['keep-alive'];
      const pending = inFlight.get(request);
      if (!pending) return;
      // A service says `Connection: close` on every answer from the moment it begins to stop: that
      // replica is leaving, so the next calls go to the others (when the setting names several). Not
      // when the request asked for it (a client's `Connection: close` is passed on): that is an echo.
      const asked = String(pending.proxyRequest?.getHeader('connection') ?? '').toLowerCase() === 'close';
      if (pending.target && !asked && upstreamResponse.headers.connection === 'close') targets.leaving(pending.target);
      if (!pending.capture) return pending.settle();
      const chunks: Buffer[] = [];
      upstreamResponse.on('data', (chunk: Buffer) => chunks.push(chunk));
      upstreamResponse.on('error', (error) => pending.settle(error));
      upstreamResponse.on('end', () => {
        const captured: CapturedResponse = {
          status: upstreamResponse.statusCode ?? 502,
          headers: endToEndHeaders(upstreamResponse),
          body: Buffer.concat(chunks),
        };
        const write = () => {
          if (!pending.detached) writeCaptured(response, captured);
          pending.settle();
        };
        pending.capture!(captured).then(write, (error: unknown) => {
          options.logger.error({ err: error, upstream: options.name }, 'could not store the response of an idempotent request');
          write();
        });
      });
    }),
    error: guarded('error', (error: Error, request: IncomingMessage) => {
      const pending = inFlight.get(request);
      if (!pending) return;
      if (pending.target) targets.unreachable(pending.target);
      // Refused: nothing reached that replica, so the call goes to another one at once, if one is left.
      if (
        (error as NodeJS.ErrnoException).code === 'ECONNREFUSED' &&
        pending.target &&
        pending.again &&
        targets.hasOtherThan(pending.target)
      ) {
        pending.proxyRequest = undefined;
        return pending.again();
      }
      pending.settle(error);
    }),
    econnreset: guarded('econnreset', (_error: Error, request: IncomingMessage) => inFlight.get(request)?.settle()),
  };

  // Without an agent http-proxy opens a new connection per request and sends `Connection: close`,
  // which the client then sees too; a keep-alive pool per upstream avoids both. It has no socket
  // limit of its own: `connections` admits at most maxSockets calls, so the agent never queues.
  const agent = new Agent({ keepAlive: true, maxFreeSockets: maxSockets });
  const targets = new UpstreamTargets(options.url);
  const proxyOptions = {
    target: targets.urls[0],
    // Each call (and each call sent again) to the next address in turn, remembered for its errors.
    router: (request: IncomingMessage) => {
      const target = targets.pick();
      const pending = inFlight.get(request);
      if (pending) pending.target = target;
      return target;
    },
    changeOrigin: false,
    agent,
  };
  const streaming: ProxyHandler = createProxyMiddleware({ ...proxyOptions, on: handlers });
  const capturing: ProxyHandler = createProxyMiddleware({ ...proxyOptions, selfHandleResponse: true, on: handlers });

  const send = (request: IncomingMessage, response: ServerResponse, forward: ForwardOptions, deadline: number) =>
    new Promise<void>((resolve, reject) => {
      let settled = false;
      const pending: InFlight = { ...forward, settle };
      // What is left of the call's deadline after its wait for a connection.
      const timer = setTimeout(
        () => letGo(new UpstreamTimeoutError(`${options.name} did not answer within ${options.timeoutMs} ms`)),
        Math.max(0, deadline - Date.now()),
      );
      function settle(error?: Error) {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        inFlight.delete(request);
        // A call that failed has nobody waiting for the upstream's answer: abort the request to it.
        if (error) pending.proxyRequest?.destroy();
        if (error) reject(error);
        else resolve();
      }
      // The client's side ends first: its deadline passed (error), or it went away.
      function letGo(error?: Error) {
        if (settled) return;
        const proxyRequest = pending.proxyRequest;
        // Still connecting (a refused or unreachable address), or a pooled socket already closed:
        // nothing reached the service, and no answer will come.
        const socket = proxyRequest?.socket;
        const reached = socket != null && !socket.connecting && !socket.destroyed;
        if (!forward.keepsAnswer || !proxyRequest || !reached) {
          // Nobody waits for the answer: neither the breaker nor the upstream is left working.
          if (!error) proxyRequest?.destroy();
          return settle(error);
        }
        // Sent, and its answer kept: the call goes on without its client until one timeout past its
        // deadline (two after its arrival, also when the client left early), which ends before the
        // key could be taken over as abandoned (three timeouts after its claim).
        settled = true;
        clearTimeout(timer);
        pending.detached = true;
        let over = () => {};
        detachedCalls.set(response, new Promise<void>((resolve) => (over = resolve)));
        const limit = setTimeout(
          () => {
            pending.settle();
            proxyRequest.destroy();
          },
          Math.max(0, deadline + options.timeoutMs - Date.now()),
        );
        pending.settle = () => {
          clearTimeout(limit);
          inFlight.delete(request);
          over();
        };
        if (error) reject(new AnswerAwaitedError(error.message));
        else resolve();
      }
      inFlight.set(request, pending);
      // A client that goes away must not leave the breaker waiting for an outcome. First among the
      // close listeners: the connection's and the program's counts (onceCallOver) see a detached call.
      response.prependOnceListener('close', () => letGo());
      const proxy = forward.capture ? capturing : streaming;
      pending.again = () =>
        void proxy(request, response, (error?: unknown) =>
          settle(error instanceof Error ? error : new Error('the request was not proxied')),
        );
      pending.again();
    });

  const circuits = new KeyedCircuits(
    send,
    {
      name: options.name,
      keyName: 'programId',
      openedMeans: "this program's requests fail fast",
      timeout: false, // the call's own deadline bounds each request and frees its socket
      errorThresholdPercentage: 50,
      volumeThreshold: 3,
      resetTimeout: options.resetTimeoutMs,
      rollingCountTimeout: 10_000,
      metrics: options.metrics?.circuits,
    },
    options.logger,
  );

  /** The turn of a call for a connection: 'ready' (held until the call is over, onceCallOver), 'late' past the deadline, 'gone' when the client left first. */
  const connectionTurn = (programId: string, response: ServerResponse, deadline: number) =>
    new Promise<'ready' | 'late' | 'gone'>((resolve) => {
      const wait: { admitted: boolean; timer?: NodeJS.Timeout } = { admitted: false };
      const place = connections.enter(programId, () => {
        wait.admitted = true;
        clearTimeout(wait.timer);
        response.off('close', gone);
        onceCallOver(response, () => connections.done(programId));
        resolve('ready');
      });
      function gone() {
        if (!place.leave()) return;
        clearTimeout(wait.timer);
        resolve('gone');
      }
      if (wait.admitted) return;
      response.once('close', gone);
      wait.timer = setTimeout(
        () => {
          if (!place.leave()) return;
          response.off('close', gone);
          resolve('late');
        },
        Math.max(0, deadline - Date.now()),
      );
    });

  /**
   * 503 {error} with Retry-After, in the route's error shape, after the caller's cleanup (an
   * idempotency claim), unless the call goes on for a kept answer (`awaited`).
   */
  const answerUnavailable = async (
    response: ServerResponse,
    forward: ForwardOptions,
    message: string,
    retryAfterSeconds: number,
    code: 'service_busy' | 'service_unavailable',
    awaited = false,
  ) => {
    if (!awaited)
      await forward
        .onUnavailable?.()
        .catch((cleanupError: unknown) => options.logger.error({ err: cleanupError }, 'cleanup after an upstream failure failed'));
    if (response.headersSent || response.destroyed) {
      response.destroy();
      return;
    }
    response.statusCode = 503;
    response.setHeader('content-type', 'application/json; charset=utf-8');
    response.setHeader('retry-after', String(retryAfterSeconds));
    response.end(JSON.stringify(errorResponseBody(503, message, forward.errorShape, { code, requestId: requestIdOf(response) })));
  };

  return {
    name: options.name,
    url: options.url,
    async forward(request, response, forward) {
      const deadline = Date.now() + options.timeoutMs;
      // The gateway has read the whole body already, so a client's `Expect: 100-continue` (older curl
      // sends it for bodies over 1 KB) was answered here. Passed on, it would make Node's client write
      // the request's head at once, before the proxyReq handler may set its headers: every such call
      // failed with a 503 at the deadline.
      delete request.headers.expect;
      const { programId } = forward;
      const calls = callsByProgram.get(programId) ?? 0;
      if (calls >= maxInFlightPerProgram) {
        options.logger.warn({ upstream: options.name, programId, calls }, 'program at its in-flight cap for this service: 503');
        options.metrics?.upstreams.shed(options.name, 'in_flight_cap');
        const message = `This program already has ${maxInFlightPerProgram} requests in flight to the ${options.name} service; retry in a moment`;
        return answerUnavailable(response, forward, message, RETRY_AFTER_BUSY_SECONDS, 'service_busy');
      }
      callsByProgram.set(programId, calls + 1);
      onceCallOver(response, () => {
        const left = (callsByProgram.get(programId) ?? 1) - 1;
        if (left > 0) callsByProgram.set(programId, left);
        else callsByProgram.delete(programId);
      });

      const turn = await connectionTurn(programId, response, deadline);
      // Nothing was sent upstream, and there is nobody to answer.
      if (turn === 'gone' || response.closed) return;
      if (turn === 'late') {
        options.logger.warn({ upstream: options.name, programId }, 'no connection to the service became free before the deadline: 503');
        options.metrics?.upstreams.shed(options.name, 'no_connection');
        const message = `No connection to the ${options.name} service became free within ${options.timeoutMs} ms; retry later`;
        return answerUnavailable(response, forward, message, RETRY_AFTER_BUSY_SECONDS, 'service_busy');
      }

      const circuit = circuits.of(programId);
      try {
        await circuit.fire(request, response, forward, deadline);
      } catch (error) {
        options.logger.warn({ err: error, upstream: options.name, programId, open: circuit.opened }, 'upstream unavailable');
        const awaited = error instanceof AnswerAwaitedError;
        await answerUnavailable(
          response,
          forward,
          awaited
            ? `The ${options.name} service did not answer in time; a retry with the same Idempotency-Key receives its answer once it has come`
            : `The ${options.name} service is unavailable; retry later`,
          Math.ceil(options.resetTimeoutMs / 1000),
          'service_unavailable',
          awaited,
        );
      }
    },
    shutdown: () => {
      circuits.shutdown();
      agent.destroy();
    },
  };
}

/** Runs `then` once the response is over (answered, or its client gone), also when it already is. */
function onceClosed(response: ServerResponse, then: () => void): void {
  if (response.closed) then();
  else response.once('close', then);
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
