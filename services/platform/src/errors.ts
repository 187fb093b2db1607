/**
 * The one error type of the platform. Domain code throws it with the status and a message the
 * integrator can act on; the central error handler turns it into the response.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** For a 503, 429 or 409: when to come back (the Retry-After header); for a 503 the platform's default when not given. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

/** One problem of a request: the field (dotted path, null when it concerns the request as a whole) and what is wrong with it. */
export type Problem = { param: string | null; message: string };

/**
 * A 400 that lists every problem found, not only the first: `error` is the first one's message (the
 * specification's sentence where it has one) and `errors` has them all, so a client fixes a form in one go.
 */
export class InvalidRequest extends AppError {
  constructor(readonly problems: readonly [Problem, ...Problem[]], message = problems[0].message) {
    super(400, message);
  }
}

export const badRequest = (message: string) => new AppError(400, message);
export const unauthorized = (message: string) => new AppError(401, message);
export const forbidden = (message: string) => new AppError(403, message);
export const notFound = (message: string) => new AppError(404, message);
export const conflict = (message: string) => new AppError(409, message);
export const serviceUnavailable = (message: string) => new AppError(503, message);

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
  return code === 11000 || (typeof message === 'string' && /^Unknown error: Document with key .* already existed in H2Collection\((?!.*\.system\.namespaces\))/.test(message));
}

/** The local server's loser of a race to create one collection (replicas starting together). */
export function isCollectionCreationRace(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && /already existed in H2Collection\(.*\.system\.namespaces\)/.test(message);
}
