import type { Request, RequestHandler } from 'express';
import { ZodEffects, ZodObject, type RefinementCtx, type ZodError, type ZodIssue, type ZodTypeAny, type z } from 'zod';
import type { ErrorCode } from '@affiliate/contracts';
import { AppError, badRequest, codeOfProblem, InvalidRequest, type Problem } from '../errors';

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

type Refinement = (value: unknown, context: RefinementCtx) => unknown;

/** The object under a schema's object-level rules (`.refine`, `.superRefine`), and those rules; null for any other shape. */
function objectAndRules(schema: ZodTypeAny): { object: ZodObject<z.ZodRawShape>; rules: Refinement[] } | null {
  const rules: Refinement[] = [];
  let inner: ZodTypeAny = schema;
  while (inner instanceof ZodEffects) {
    const effect = (inner as ZodEffects<ZodTypeAny>)._def.effect;
    if (effect.type !== 'refinement') return null;
    rules.unshift(effect.refinement as Refinement);
    inner = (inner as ZodEffects<ZodTypeAny>)._def.schema;
  }
  return inner instanceof ZodObject && rules.length > 0 ? { object: inner as ZodObject<z.ZodRawShape>, rules } : null;
}

/**
 * zod runs an object's own rules (the cross-field ones: "one of promoCode, referralId or email is
 * required") only once every field is valid, so a body with a bad field would hide them. Here they
 * run on what can be judged: the valid fields as parsed (defaults and normalizing applied), the
 * invalid ones as sent (so a rule asking whether a field was sent sees it). What a rule says about
 * an invalid field is left out (that field has its own problem already), and so is everything when
 * a rule cannot judge such a body (it throws). Listed after zod's own problems, so the first one,
 * the `error` message, is what it always was.
 */
function crossFieldIssues(schema: ZodTypeAny, raw: unknown, error: ZodError): ZodIssue[] {
  const found = objectAndRules(schema);
  if (!found || raw === null || typeof raw !== 'object' || Array.isArray(raw)) return [];
  const sent = raw as Record<string, unknown>;
  const invalid = new Set<string>();
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') issue.keys.forEach((key) => invalid.add(key));
    else if (issue.path.length > 0) invalid.add(String(issue.path[0]));
  }
  // A problem of the body as a whole (not an object, a rule's own failure): nothing more to judge.
  if (invalid.size === 0) return [];
  const judged = [...invalid].filter((key) => key in found.object.shape);
  const valid = found.object.omit(Object.fromEntries(judged.map((key) => [key, true]))).strip();
  const parsed = valid.safeParse(Object.fromEntries(Object.entries(sent).filter(([key]) => !invalid.has(key))));
  if (!parsed.success) return [];
  const value = { ...parsed.data, ...Object.fromEntries(judged.filter((key) => key in sent).map((key) => [key, sent[key]])) };
  const issues: ZodIssue[] = [];
  const context = {
    path: [],
    addIssue: (issue: { path?: (string | number)[]; message?: string }) =>
      issues.push({ code: 'custom', path: issue.path ?? [], message: issue.message ?? 'Invalid input' }),
  } as unknown as RefinementCtx;
  try {
    for (const rule of found.rules) rule(value, context);
  } catch {
    return [];
  }
  return issues.filter((issue) => !(issue.path.length > 0 && invalid.has(String(issue.path[0]))));
}

/** The catalogued code of a zod issue: an unknown field, a missing one (also by a schema's own rule: "x is required when y"), or any other wrong value. */
function codeOfIssue(issue: ZodIssue): ErrorCode {
  if (issue.code === 'unrecognized_keys') return 'parameter_unknown';
  if (issue.code === 'invalid_type' && issue.received === 'undefined') return 'parameter_missing';
  return issue.code === 'custom' ? codeOfProblem(issue) : 'parameter_invalid';
}

/** Every problem zod found, one per field (an unknown field each its own), the exact ones first, then the cross-field rules' (crossFieldIssues). */
function invalidRequest(error: ZodError, where: Where, options: ParseOptions, crossField: ZodIssue[] = []): InvalidRequest {
  const exact = (issue: ZodIssue) => options.exactMessages?.includes(issue.message) ?? false;
  const ordered = [...error.issues.filter(exact), ...error.issues.filter((issue) => !exact(issue)), ...crossField];
  const first = ordered[0];
  if (!first) return new InvalidRequest([{ param: null, message: `Invalid request ${where}` }]);
  const code = codeOfIssue(first);
  const problems: Problem[] = ordered.flatMap((issue): Problem[] => {
    if (issue.code === 'unrecognized_keys')
      return issue.keys.map((key) => ({ param: [...issue.path, key].join('.'), message: `Unknown field in ${where}: ${key}` }));
    return [
      {
        param: issue.path.length > 0 ? issue.path.join('.') : null,
        message: exact(issue) ? issue.message : describeZodIssue(issue, where),
      },
    ];
  });
  const seen = new Set<string>();
  const distinct = problems.filter(
    (problem) => !seen.has(`${problem.param}\n${problem.message}`) && seen.add(`${problem.param}\n${problem.message}`),
  );
  return new InvalidRequest(distinct as [Problem, ...Problem[]], exact(first) ? first.message : describeZodIssue(first, where), code);
}

export function parseBody<Schema extends ZodTypeAny>(schema: Schema, request: Request, options: ParseOptions = {}): z.infer<Schema> {
  const body: unknown = request.body === undefined ? {} : request.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw badRequest('Request body must be a JSON object', 'body_malformed');
  }
  const result = schema.safeParse(body);
  if (!result.success) throw invalidRequest(result.error, 'body', options, crossFieldIssues(schema, body, result.error));
  return result.data;
}

export function parseQuery<Schema extends ZodTypeAny>(schema: Schema, request: Request): z.infer<Schema> {
  for (const [key, value] of Object.entries(request.query)) {
    // ?a=1&a=2 and ?a[b]=1 arrive as arrays and objects; lookups take one plain value.
    if (typeof value !== 'string') throw badRequest(`${key} must be given once, as plain text`, 'parameter_invalid', key);
  }
  const result = schema.safeParse(request.query);
  if (!result.success) throw invalidRequest(result.error, 'query', {}, crossFieldIssues(schema, request.query, result.error));
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
  next(
    new AppError(
      415,
      `Content-Type must be ${ACCEPTED_BODY_TYPE}; the body was sent as ${request.headers['content-type'] ?? 'no type at all'}`,
      { code: 'unsupported_media_type' },
    ),
  );
};
