import type { Request, RequestHandler } from 'express';
import type { ZodError, ZodIssue, ZodTypeAny, z } from 'zod';
import { AppError, badRequest, InvalidRequest, type Problem } from '../errors';

type Where = 'body' | 'query';

/** One readable sentence naming the field and what is wrong with it. */
function describeZodIssue(issue: ZodIssue, where: Where): string {
  const field = issue.path.join('.');
  if (issue.code === 'unrecognized_keys') {
    return `Unknown field${issue.keys.length > 1 ? 's' : ''} in ${where}: ${issue.keys.join(', ')}`;
  }
  if (issue.code === 'invalid_type' && issue.received === 'undefined') {
    return field ? `${field} is required` : `Request ${where} is required`;
  }
  if (!field) return `Invalid request ${where}: ${issue.message}`;
  // Custom rule messages already name the field; the generic ones do not.
  return issue.message.startsWith(field) ? issue.message : `${field}: ${issue.message}`;
}

/** The first problem as one sentence (where a single message is wanted: Stripe events, the CLI). */
export function describeZodError(error: ZodError, where: Where): string {
  const issue = error.issues[0];
  return issue ? describeZodIssue(issue, where) : `Invalid request ${where}`;
}

export type ParseOptions = {
  /**
   * Messages the specification fixes word for word (the slug rules): answered bare, without the
   * field name, and first, whatever zod found before them.
   */
  exactMessages?: readonly string[];
};

/** Every problem zod found, one per field (an unknown field each its own), the exact ones first. */
function invalidRequest(error: ZodError, where: Where, options: ParseOptions): InvalidRequest {
  const exact = (issue: ZodIssue) => options.exactMessages?.includes(issue.message) ?? false;
  const ordered = [...error.issues.filter(exact), ...error.issues.filter((issue) => !exact(issue))];
  const first = ordered[0];
  if (!first) return new InvalidRequest([{ param: null, message: `Invalid request ${where}` }]);
  const problems: Problem[] = ordered.flatMap((issue): Problem[] => {
    if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => ({ param: [...issue.path, key].join('.'), message: `Unknown field in ${where}: ${key}` }));
    return [{ param: issue.path.length > 0 ? issue.path.join('.') : null, message: exact(issue) ? issue.message : describeZodIssue(issue, where) }];
  });
  const seen = new Set<string>();
  const distinct = problems.filter((problem) => !seen.has(`${problem.param}\n${problem.message}`) && seen.add(`${problem.param}\n${problem.message}`));
  return new InvalidRequest(distinct as [Problem, ...Problem[]], exact(first) ? first.message : describeZodIssue(first, where));
}

export function parseBody<Schema extends ZodTypeAny>(schema: Schema, request: Request, options: ParseOptions = {}): z.infer<Schema> {
  const body: unknown = request.body === undefined ? {} : request.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw badRequest('Request body must be a JSON object');
  }
  const result = schema.safeParse(body);
  if (!result.success) throw invalidRequest(result.error, 'body', options);
  return result.data;
}

export function parseQuery<Schema extends ZodTypeAny>(schema: Schema, request: Request): z.infer<Schema> {
  for (const [key, value] of Object.entries(request.query)) {
    // ?a=1&a=2 and ?a[b]=1 arrive as arrays and objects; lookups take one plain value.
    if (typeof value !== 'string') throw badRequest(`${key} must be given once, as plain text`);
  }
  const result = schema.safeParse(request.query);
  if (!result.success) throw invalidRequest(result.error, 'query', {});
  return result.data;
}

export const ACCEPTED_BODY_TYPE = 'application/json';

/**
 * A body is JSON or nothing: one sent as text/plain or a form would otherwise reach the JSON parser
 * unread and be judged as an empty body ("firstName is required"), which hides the real mistake.
 * 415 names the type accepted. A request without a body (no length, not chunked) passes.
 */
export const requireJsonBody: RequestHandler = (request, _response, next) => {
  const hasBody = request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
  if (!hasBody || request.is(ACCEPTED_BODY_TYPE) === ACCEPTED_BODY_TYPE) return next();
  next(new AppError(415, `Content-Type must be ${ACCEPTED_BODY_TYPE}; the body was sent as ${request.headers['content-type'] ?? 'no type at all'}`));
};
