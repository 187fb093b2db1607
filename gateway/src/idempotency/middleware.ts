import { createHash } from 'node:crypto';
import { defaultErrorCodeOf } from '@affiliate/contracts';
import { AppError, badRequest, conflict, requestIdOf } from '@affiliate/platform';
import type { Request, RequestHandler, Response } from 'express';
import stableStringify from 'safe-stable-stringify';
import { callerOf } from '../auth/authenticate';
import type { CapturedResponse, ForwardOptions } from '../proxy/upstream-proxy';
import { writeCaptured } from '../proxy/upstream-proxy';
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey } from './claim-idempotency-key';
import type { IdempotencyRecordModel } from './idempotency-record';

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
const KEPT_HEADERS = ['content-type', 'location', 'link'];
const VALID_KEY = /^[\x21-\x7e]{1,255}$/;
/** The methods that change something; a GET needs no key (it is safe to repeat as it is). */
const IDEMPOTENT_METHODS = new Set(['POST', 'PUT', 'DELETE']);
/** A retry of a request still running: about the time one takes, so the retry meets the stored answer. */
export const IN_PROGRESS_RETRY_AFTER_SECONDS = 1;

/**
 * What makes two requests "the same": method, path with query, and the body's meaning. A JSON body
 * counts as its canonical form (keys sorted, no insignificant whitespace, numbers as parsed), so a
 * retry from another serializer matches; a body that is not JSON counts as its bytes.
 */
export function requestFingerprint(request: Pick<Request, 'method' | 'url'>, body: Buffer): string {
  let meaning: Buffer | string = body;
  if (body.length > 0) {
    try {
      meaning = stableStringify(JSON.parse(body.toString('utf8')) as unknown) ?? body;
    } catch {
      // Not JSON: the service will refuse it; the bytes are all there is to compare.
    }
  }
  return createHash('sha256').update(`${request.method}\n${request.url}\n`).update(meaning).digest('hex');
}

export type IdempotentForwarding = Pick<ForwardOptions, 'capture' | 'onUnavailable' | 'keepsAnswer'>;

/**
 * DESIGN.md §2: a POST, PUT or DELETE with an Idempotency-Key is answered once; a retry with the
 * same key and the same request (requestFingerprint) gets the stored answer, a different request
 * with that key gets 409, and a retry while the first is still running gets 409 with Retry-After.
 * Records are per program, for 24 hours.
 */
export function idempotency(records: IdempotencyRecordModel, abandonedAfterMs: number): RequestHandler {
  return async (request, response, next) => {
    const key = request.header(IDEMPOTENCY_KEY_HEADER);
    if (!IDEMPOTENT_METHODS.has(request.method) || key === undefined) return next();
    if (!VALID_KEY.test(key))
      throw badRequest('Idempotency-Key must be 1 to 255 printable characters without spaces', 'idempotency_key_invalid');
    const body = Buffer.isBuffer(request.body) ? request.body : rawBodyOf(response);
    const requestHash = requestFingerprint(request, body);
    const programId = callerOf(response).programId;
    const claim = await claimIdempotencyKey(records, { programId, key, requestHash }, abandonedAfterMs);
    if (claim.kind === 'different-request') {
      throw conflict(
        'This Idempotency-Key was already used with a different request; use a new key for a new request',
        'idempotency_key_reused',
      );
    }
    if (claim.kind === 'in-progress') {
      throw new AppError(
        409,
        `A request with this Idempotency-Key is still being processed; retry in ${IN_PROGRESS_RETRY_AFTER_SECONDS} s`,
        { code: 'idempotency_key_in_use', retryAfterSeconds: IN_PROGRESS_RETRY_AFTER_SECONDS },
      );
    }
    if (claim.kind === 'replay') {
      response.setHeader('Idempotent-Replayed', 'true');
      writeCaptured(response, withRequestIdOf(claim.response, requestIdOf(response)));
      return;
    }
    const forwarding: IdempotentForwarding = {
      capture: (captured) =>
        completeIdempotencyKey(records, claim.recordId, {
          status: captured.status,
          headers: Object.fromEntries(
            KEPT_HEADERS.filter((name) => captured.headers[name] !== undefined).map((name) => [
              name,
              captured.headers[name] as string | string[],
            ]),
          ),
          body: withoutCredentials(captured.body, ['secret', ...withheldOnReplayOf(response)]),
        }),
      onUnavailable: () => releaseIdempotencyKey(records, claim.recordId),
      keepsAnswer: true,
    };
    response.locals.idempotentForwarding = forwarding;
    next();
  };
}

/**
 * A replayed error names the replay's request id, as its X-Request-Id header does: the body's
 * `requestId` is always the id of the answer it came in (the first request's is in the logs under it).
 */
function withRequestIdOf(stored: CapturedResponse, requestId: string): CapturedResponse {
  if (stored.status < 400) return stored;
  try {
    const body = JSON.parse(stored.body.toString('utf8')) as unknown;
    if (typeof body !== 'object' || body === null || Array.isArray(body) || !('error' in body || 'requestId' in body)) return stored;
    // An error kept before errors were coded (up to 24 h after an upgrade) gains its status's code too.
    const code = 'code' in body ? {} : { code: defaultErrorCodeOf(stored.status) };
    return { ...stored, body: Buffer.from(JSON.stringify({ ...body, ...code, requestId })) };
  } catch {
    return stored;
  }
}

/**
 * What is kept for replays (24 h, in the gateway's database) never holds a credential: a webhook
 * signing secret (`secret`: a client that lost it rotates the secret), nor a field a route names
 * with `withheldOnReplay` (the affiliate portal link's `url`, whose token opens a portal: a client
 * that lost it makes a new session). The first answer carries it, a replay answers without it.
 */
function withoutCredentials(body: Buffer, fields: string[]): Buffer {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return body;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || !fields.some((field) => field in parsed)) return body;
  const rest = Object.fromEntries(Object.entries(parsed).filter(([name]) => !fields.includes(name)));
  return Buffer.from(JSON.stringify(rest));
}

const withheldOnReplayOf = (response: Response): string[] => (response.locals.withheldOnReplay as string[] | undefined) ?? [];

/** Placed before `idempotency`: the answer's top-level `fields` are credentials, answered once and never stored for a replay. */
export const withheldOnReplay =
  (...fields: string[]): RequestHandler =>
  (_request, response, next) => {
    response.locals.withheldOnReplay = fields;
    next();
  };

/**
 * The bytes of a body the gateway parsed itself (its own routes parse JSON), kept by
 * `keepRawBody` for the request fingerprint; none: an empty body.
 */
const rawBodyOf = (response: Response): Buffer => (Buffer.isBuffer(response.locals.rawBody) ? response.locals.rawBody : Buffer.alloc(0));

/** The `verify` option of express.json: keeps the bytes it parsed, so `idempotency` can fingerprint them. */
export const keepRawBody = (_request: unknown, response: Response, bytes: Buffer): void => {
  response.locals.rawBody = bytes;
};

/**
 * For the routes the gateway answers itself (its program settings and publishable keys): after
 * `idempotency`, the answer the route writes is stored for replays before it is sent, as a
 * service's answer is by the proxy, so a retry with the same key gets it with
 * `Idempotent-Replayed: true` instead of running the write again.
 */
export const storeLocalAnswer: RequestHandler = (_request, response, next) => {
  const capture = idempotentForwardingOf(response)?.capture;
  if (!capture) return next();
  const chunks: Buffer[] = [];
  const end = response.end.bind(response) as (body: Buffer) => Response;
  const toBuffer = (chunk: unknown, encoding?: unknown) =>
    Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk), typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
  response.write = ((chunk: unknown, encoding?: unknown) => {
    if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') chunks.push(toBuffer(chunk, encoding));
    return true;
  }) as Response['write'];
  response.end = ((chunk?: unknown, encoding?: unknown) => {
    if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') chunks.push(toBuffer(chunk, encoding));
    const body = Buffer.concat(chunks);
    const headers = Object.fromEntries(
      Object.entries(response.getHeaders())
        .filter(([, value]) => value !== undefined)
        .map(([name, value]) => [name, Array.isArray(value) ? value : String(value)]),
    );
    const send = () => end(body);
    capture({ status: response.statusCode, headers, body }).then(send, send);
    return response;
  }) as Response['end'];
  next();
};

export function idempotentForwardingOf(response: Response): IdempotentForwarding | undefined {
  return response.locals.idempotentForwarding as IdempotentForwarding | undefined;
}
