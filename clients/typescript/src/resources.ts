import type { Client } from 'openapi-fetch';
import { AffiliateApiError } from './errors';
import { RESOURCES } from './operations';
import { IDEMPOTENCY_KEY_HEADER } from './retry';
import type { paths } from './schema';

type Method = 'get' | 'post' | 'put' | 'delete';
type Operation<Path extends keyof paths, M extends Method> = NonNullable<paths[Path][M]>;
type QueryOf<Op> = Op extends { parameters: { query?: infer Query } } ? NonNullable<Query> : never;
type BodyOf<Op> = Op extends { requestBody?: { content: { 'application/json': infer Body } } } ? Body : never;
type DataOf<Op> = Op extends { responses: { 200: { content: { 'application/json': infer Data } } } } ? Data : unknown;
/** A list answers an array; a lookup by id (the same route with `id=`) answers one object. */
type ItemOf<Op> = Extract<DataOf<Op>, readonly unknown[]>[number];

/** Per call: an AbortSignal, extra headers, and your own Idempotency-Key (e.g. derived from your order id) instead of a fresh UUID. */
export type CallOptions = { signal?: AbortSignal; headers?: Record<string, string>; idempotencyKey?: string };

/** The paths whose GET pages with startingAfter and a Link header (the admin lists too). */
export type PagedPath = {
  [Path in keyof paths]: 'startingAfter' extends keyof QueryOf<Operation<Path, 'get'>> ? Path : never;
}[keyof paths];

type Has<Methods extends readonly Method[], M extends Method> = M extends Methods[number] ? true : false;

/** The methods of one resource, each present when the API has it; each resolves to the success body or throws AffiliateApiError. */
export type Resource<Path extends keyof paths, Methods extends readonly Method[], Listed extends boolean> = (Listed extends true
  ? {
      /**
       * Every object of the list as you iterate: `for await (const sale of client.sales.list())`. A paged
       * list is fetched page after page (newest first); one that does not page is its one answer.
       */
      list(
        query?: Omit<QueryOf<Operation<Path, 'get'>>, 'startingAfter'>,
        options?: CallOptions,
      ): AsyncIterableIterator<ItemOf<Operation<Path, 'get'>>>;
    }
  : unknown) &
  (Has<Methods, 'get'> extends true
    ? { retrieve(query?: QueryOf<Operation<Path, 'get'>>, options?: CallOptions): Promise<DataOf<Operation<Path, 'get'>>> }
    : unknown) &
  (Has<Methods, 'post'> extends true
    ? { create(body: BodyOf<Operation<Path, 'post'>>, options?: CallOptions): Promise<DataOf<Operation<Path, 'post'>>> }
    : unknown) &
  (Has<Methods, 'put'> extends true
    ? { update(body: BodyOf<Operation<Path, 'put'>>, options?: CallOptions): Promise<DataOf<Operation<Path, 'put'>>> }
    : unknown) &
  (Has<Methods, 'delete'> extends true
    ? { delete(body: BodyOf<Operation<Path, 'delete'>>, options?: CallOptions): Promise<DataOf<Operation<Path, 'delete'>>> }
    : unknown);

type Resources = typeof RESOURCES;
export type ResourceClients = {
  readonly [Name in keyof Resources]: Resource<Resources[Name]['path'], Resources[Name]['methods'], Resources[Name]['list']>;
};

type LooseCall = (
  method: string,
  path: string,
  init: Record<string, unknown>,
) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

/** One call through openapi-fetch: the success body, or the answer's error thrown as AffiliateApiError. */
async function call(
  client: Client<paths>,
  method: Method,
  path: string,
  input: { query?: object; body?: unknown },
  options: CallOptions = {},
) {
  const headers = { ...options.headers, ...(options.idempotencyKey ? { [IDEMPOTENCY_KEY_HEADER]: options.idempotencyKey } : {}) };
  const { data, error, response } = await (client.request as unknown as LooseCall)(method, path, {
    ...(input.query ? { params: { query: input.query } } : {}),
    ...(input.body === undefined ? {} : { body: input.body }),
    headers,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (!response.ok) throw AffiliateApiError.from(response, error);
  return { data, response };
}

/** The startingAfter of the Link header's rel="next" (RFC 8288), or undefined on the last page. */
export function nextCursor(link: string | null): string | undefined {
  for (const part of link?.split(',') ?? []) {
    const match = /<([^>]*)>\s*;\s*rel="?next"?/.exec(part);
    if (match?.[1] !== undefined) return new URL(match[1], 'http://link.invalid').searchParams.get('startingAfter') ?? undefined;
  }
  return undefined;
}

/** The paths whose GET answers a list, paged or not (a list that does not page is one page). */
type ListedPath = {
  [Path in keyof paths]: Extract<DataOf<Operation<Path, 'get'>>, readonly unknown[]> extends never ? never : Path;
}[keyof paths];

/**
 * Every object of a paged list: asks for a page, yields its objects, then asks for the next one with
 * the startingAfter its Link header names (the caller's filters and limit kept), until a page has no
 * next link. Pages are fetched as the caller iterates: breaking out of the loop stops the paging.
 * A list that does not page answers without a next link: its one answer is the whole list.
 */
export async function* paginate<Path extends PagedPath | ListedPath>(
  client: Client<paths>,
  path: Path,
  query: Omit<QueryOf<Operation<Path, 'get'>>, 'startingAfter'> = {} as never,
  options?: CallOptions,
): AsyncIterableIterator<ItemOf<Operation<Path, 'get'>>> {
  let cursor: string | undefined;
  for (;;) {
    const { data, response } = await call(
      client,
      'get',
      path,
      { query: cursor === undefined ? query : { ...query, startingAfter: cursor } },
      options,
    );
    const items = (Array.isArray(data) ? data : data === null || data === undefined ? [] : [data]) as ItemOf<Operation<Path, 'get'>>[];
    yield* items;
    const next = nextCursor(response.headers.get('link'));
    if (next === undefined || next === cursor || items.length === 0) return;
    cursor = next;
  }
}

/** `client.sales`, `client.affiliates`, …: one object per resource in RESOURCES, with the methods it has. */
export function resourceClients(client: Client<paths>): ResourceClients {
  const entries = Object.entries(RESOURCES).map(([name, { path, methods, list }]) => {
    const has = (method: Method) => (methods as readonly Method[]).includes(method);
    const resource: Record<string, unknown> = {};
    if (list) resource.list = (query?: object, options?: CallOptions) => paginate(client, path as PagedPath, query as never, options);
    if (has('get'))
      resource.retrieve = async (query?: object, options?: CallOptions) => (await call(client, 'get', path, { query }, options)).data;
    if (has('post'))
      resource.create = async (body: unknown, options?: CallOptions) => (await call(client, 'post', path, { body }, options)).data;
    if (has('put'))
      resource.update = async (body: unknown, options?: CallOptions) => (await call(client, 'put', path, { body }, options)).data;
    if (has('delete'))
      resource.delete = async (body: unknown, options?: CallOptions) => (await call(client, 'delete', path, { body }, options)).data;
    return [name, Object.freeze(resource)];
  });
  return Object.freeze(Object.fromEntries(entries)) as ResourceClients;
}
