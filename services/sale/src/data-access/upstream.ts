import { AppError } from '@affiliate/platform';
import type { ZodTypeAny, z } from 'zod';

/** The `error` message another service answered with, if it gave one. */
export function upstreamMessage(body: unknown): string | undefined {
  const error = (body as { error?: unknown; message?: unknown } | null)?.error;
  const message = (body as { message?: unknown } | null)?.message;
  if (typeof error === 'string') return error;
  return typeof message === 'string' ? message : undefined;
}

/** A 200 answer in the shape the contract promises, or a 502 naming the service that broke it. */
export function expectShape<Schema extends ZodTypeAny>(
  service: string,
  schema: Schema,
  response: { status: number; body: unknown },
): z.infer<Schema> {
  const parsed = schema.safeParse(response.body);
  if (response.status !== 200 || !parsed.success) {
    throw new AppError(502, `The ${service} service gave an unexpected answer (${response.status})`);
  }
  return parsed.data;
}
