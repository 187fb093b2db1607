import createClient, { type Client } from 'openapi-fetch';
import { paginate, resourceClients, type CallOptions, type PagedPath, type ResourceClients } from './resources';
import { retryingFetch, type RetryOptions } from './retry';
import type { components, paths } from './schema';

export type { components, operations, paths, webhooks } from './schema';
export { AffiliateApiError, type Problem } from './errors';
export { API_VERSION, RESOURCES } from './operations';
export type { CallOptions, PagedPath, Resource, ResourceClients } from './resources';
export { retryAfterMs, type RetryOptions } from './retry';
export {
  verifyWebhook,
  WebhookVerificationError,
  type VerifyWebhookOptions,
  type WebhookEvent,
  type WebhookFailure,
  type WebhookHeaders,
} from './webhooks';

/** The public API's resources, as the document names them (Coupon, PromotionalCode, Affiliate, Sale, ...). */
export type Schemas = components['schemas'];

export type AffiliateClientOptions = RetryOptions & {
  /** Where the gateway is, e.g. https://affiliates.example.com (the paths carry /api/v1). */
  baseUrl: string;
  /** An API key of the program: `ak_live_…`. */
  apiKey: string;
  /** A fetch of your own (tracing, tests); the global one otherwise. Retries happen around it: it sees every attempt. */
  fetch?: typeof globalThis.fetch;
};

/**
 * Answers are typed as their JSON: the lists that also answer CSV (format=csv, Accept: text/csv)
 * would otherwise type every answer as "JSON or a string". Read a CSV with parseAs: 'text'.
 */
export type AffiliateClient = Client<paths, 'application/json'> &
  ResourceClients & {
    /** Every object of any paged list (the admin lists too), page after page: `for await (const item of client.paginate(path, query))`. */
    paginate<Path extends PagedPath>(
      path: Path,
      query?: Parameters<typeof paginate<Path>>[2],
      options?: CallOptions,
    ): ReturnType<typeof paginate<Path>>;
  };

/**
 * A client whose every method, path, body, query and answer is typed from the OpenAPI document.
 * Two ways to call:
 * - `client.sales.create(body)`, `client.sales.list(query)` (an async iterator over every page),
 *   `retrieve`, `update`, `delete`: the success body, or an AffiliateApiError thrown;
 * - `client.POST('/api/v1/coupons', { body })`, resolving to `{ data, error, response }` (openapi-fetch).
 * Under both, every POST carries an Idempotency-Key, and 429, 503 and lost connections are retried.
 */
export function createAffiliateClient(options: AffiliateClientOptions): AffiliateClient {
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const client = createClient<paths, 'application/json'>({
    baseUrl: options.baseUrl,
    headers: { authorization: `Bearer ${options.apiKey}` },
    fetch: retryingFetch(send, options),
  });
  return Object.assign(client, resourceClients(client), {
    paginate: <Path extends PagedPath>(path: Path, query?: Parameters<typeof paginate<Path>>[2], callOptions?: CallOptions) =>
      paginate(client, path, query, callOptions),
  });
}
