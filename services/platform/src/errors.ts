import { defaultErrorCodeOf, isErrorCode, type ErrorCode } from '@affiliate/contracts';

export type AppErrorOptions = {
  /** The catalogued code (contracts/src/errors.ts); the status's generic one when not given. */
  code?: ErrorCode;
  /** The field at fault, as a dotted path, when the error concerns one. */
  param?: string | null;
  /** For a 503, 429 or 409: when to come back (the Retry-After header); for a 503 the platform's default when not given. */
  retryAfterSeconds?: number;
};

/**
 * The one error type of the platform. Domain code throws it with the status, a message the
 * integrator can act on and the catalogued code a program branches on; the central error handler
 * turns it into the response.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly param: string | null;
  readonly retryAfterSeconds?: number;

  constructor(
    readonly status: number,
    message: string,
    options: AppErrorOptions = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.code = options.code ?? defaultErrorCodeOf(status);
    this.param = options.param ?? null;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** One problem of a request: the field (dotted path, null when it concerns the request as a whole) and what is wrong with it. */
export type Problem = { param: string | null; message: string };

/**
 * The code of a problem its finder did not code (a schema's own rule, the sign-up answers): the
 * platform's sentences say "<field> is required" of a missing field and "Unknown field" of an unknown one.
 */
export function codeOfProblem(problem: Pick<Problem, 'message'>): ErrorCode {
  if (/^Unknown fields? in /.test(problem.message)) return 'parameter_unknown';
  if (/ is required\b/.test(problem.message)) return 'parameter_missing';
  return 'parameter_invalid';
}

/**
 * A 400 that lists every problem found, not only the first: `error` is the first one's message (the
 * specification's sentence where it has one) and `errors` has them all, so a client fixes a form in one go.
 * Its code and param are the first problem's.
 */
export class InvalidRequest extends AppError {
  constructor(
    readonly problems: readonly [Problem, ...Problem[]],
    message = problems[0].message,
    code: ErrorCode = codeOfProblem(problems[0]),
  ) {
    super(400, message, { code, param: problems[0].param });
  }
}

export const badRequest = (message: string, code?: ErrorCode, param?: string) => new AppError(400, message, { code, param });
export const unauthorized = (message: string, code?: ErrorCode) => new AppError(401, message, { code });
export const forbidden = (message: string, code?: ErrorCode) => new AppError(403, message, { code });
export const notFound = (message: string, code?: ErrorCode) => new AppError(404, message, { code });
export const conflict = (message: string, code?: ErrorCode, retryAfterSeconds?: number) =>
  new AppError(409, message, { code, retryAfterSeconds });
export const serviceUnavailable = (message: string, code?: ErrorCode) => new AppError(503, message, { code });

/**
 * The code an error body of another service carries, when it is a catalogued one: a service that
 * passes on another's refusal keeps its code, as it keeps its message.
 */
export function upstreamCodeOf(body: unknown): ErrorCode | undefined {
  const code = (body as { code?: unknown } | null)?.code;
  return isErrorCode(code) ? code : undefined;
}

const MONGO_UNAVAILABLE = new Set([
  'MongoServerSelectionError',
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoNotConnectedError',
  'MongoTopologyClosedError',
  'MongooseServerSelectionError',
]);

/** True when an error means the database cannot be reached, which is a 503, not a 500. */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (MONGO_UNAVAILABLE.has(error.name)) return true;
  // A bulk write (insertMany, bulkWrite) wraps whatever stopped it in a MongoBulkWriteError, the
  // database's absence included: the driver's own error is then the wrapper's `errorResponse` (where
  // a refusal, a duplicate key among them, leaves a description that is not an Error). As with a
  // single write whose answer was lost, part of the bulk may have been applied before the 503: what a
  // retry then does is each write path's own (RELIABILITY.md).
  const wrapped = (error as { errorResponse?: unknown }).errorResponse;
  if (error.name === 'MongoBulkWriteError' && wrapped instanceof Error) return isDatabaseUnavailable(wrapped);
  // Mongoose with buffering off reports a closed connection this way.
  return /before initial connection is complete|Client must be connected|connection .* closed/i.test(error.message);
}

/**
 * True for a MongoDB unique-index violation. The local server (mongo-java-server on H2) reports two
 * inserts of one key that race on a collection's first writes as an "Unknown error" saying the
 * document "already existed": the same fact, so the same answer (gateway/test/bootstrap-key.races).
 */
export function isDuplicateKey(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return (
    code === 11000 ||
    (typeof message === 'string' &&
      /^Unknown error: Document with key .* already existed in H2Collection\((?!.*\.system\.namespaces\))/.test(message))
  );
}

/** The local server's loser of a race to create one collection (replicas starting together). */
export function isCollectionCreationRace(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && /already existed in H2Collection\(.*\.system\.namespaces\)/.test(message);
}
