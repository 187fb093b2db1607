import type { Request } from 'express';
import type { ZodError, ZodTypeAny, z } from 'zod';
import { badRequest } from '../errors';

/** One readable sentence naming the field and what is wrong with it. */
export function describeZodError(error: ZodError, where: 'body' | 'query'): string {
  const issue = error.issues[0];
  if (!issue) return `Invalid request ${where}`;
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

export function parseBody<Schema extends ZodTypeAny>(schema: Schema, request: Request): z.infer<Schema> {
  const body: unknown = request.body === undefined ? {} : request.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw badRequest('Request body must be a JSON object');
  }
  const result = schema.safeParse(body);
  if (!result.success) throw badRequest(describeZodError(result.error, 'body'));
  return result.data;
}

export function parseQuery<Schema extends ZodTypeAny>(schema: Schema, request: Request): z.infer<Schema> {
  for (const [key, value] of Object.entries(request.query)) {
    // ?a=1&a=2 and ?a[b]=1 arrive as arrays and objects; lookups take one plain value.
    if (typeof value !== 'string') throw badRequest(`${key} must be given once, as plain text`);
  }
  const result = schema.safeParse(request.query);
  if (!result.success) throw badRequest(describeZodError(result.error, 'query'));
  return result.data;
}
