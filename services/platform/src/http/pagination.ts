import type { Request, Response } from 'express';
import type { FilterQuery, Model } from 'mongoose';
import { badRequest } from '../errors';

export const DEFAULT_PAGE_SIZE = 100;
export const FORWARDED_PREFIX_HEADER = 'x-forwarded-prefix';

export type PageRequest = { limit?: number; startingAfter?: string };
type Listed = { _id: unknown; createdAt: Date };

/**
 * One page of a list, newest first (createdAt, then id, so equal timestamps still page stably).
 * `startingAfter` is the id of the last item of the previous page. It is looked up in `cursorScope`
 * (the program, for a program's list), not with the list's filter: the (createdAt, id) order does not
 * depend on the filter, and the item may have left the list since its page was read (a held
 * commission released, a delivery delivered), which must not break the next link.
 */
export async function findPage<Doc extends Listed>(
  model: Model<Doc>,
  scope: FilterQuery<Doc>,
  page: PageRequest,
  cursorScope: FilterQuery<Doc> = scope,
): Promise<{ items: Doc[]; nextCursor: string | null }> {
  const limit = page.limit ?? DEFAULT_PAGE_SIZE;
  let filter: FilterQuery<Doc> = scope;
  if (page.startingAfter !== undefined) {
    const cursor = (await model
      .findOne({ ...cursorScope, _id: page.startingAfter } as FilterQuery<Doc>)
      .select('createdAt')
      .lean()) as Listed | null;
    if (!cursor)
      throw badRequest(`startingAfter: no object with id ${page.startingAfter} in this list`, 'resource_missing', 'startingAfter');
    filter = {
      ...scope,
      $or: [{ createdAt: { $lt: cursor.createdAt } }, { createdAt: cursor.createdAt, _id: { $lt: cursor._id } }],
    } as FilterQuery<Doc>;
  }
  const found = (await model
    .find(filter)
    .sort({ createdAt: -1, _id: -1 })
    .limit(limit + 1)
    .lean()) as Doc[];
  const items = found.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextCursor: found.length > limit && last ? String(last._id) : null };
}

/** The body stays a bare array; the next page is announced in a Link header, as the design says. */
export function setNextPageLink(request: Request, response: Response, nextCursor: string | null, limit?: number): void {
  if (!nextCursor) return;
  const prefix = request.header(FORWARDED_PREFIX_HEADER) ?? '';
  // Keep the caller's filters, so following the link pages through the same list.
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(request.query)) {
    if (typeof value === 'string' && key !== 'limit' && key !== 'startingAfter') query.set(key, value);
  }
  query.set('limit', String(limit ?? DEFAULT_PAGE_SIZE));
  query.set('startingAfter', nextCursor);
  response.setHeader('Link', `<${prefix}${request.baseUrl}${request.path}?${query.toString()}>; rel="next"`);
}
