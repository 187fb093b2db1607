import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './schema';

export type { components, paths } from './schema';

/** The public API's resources, as the document names them (Coupon, PromotionalCode, Affiliate, Sale, ...). */
export type Schemas = components['schemas'];

export type AffiliateClientOptions = {
  /** Where the gateway is, e.g. https://affiliates.example.com (the paths carry /api/v1). */
  baseUrl: string;
  /** An API key of the program: `ak_live_…`. */
  apiKey: string;
  /** A fetch of your own (retries, tracing, tests); the global one otherwise. */
  fetch?: typeof globalThis.fetch;
};

/**
 * Answers are typed as their JSON: the lists that also answer CSV (format=csv, Accept: text/csv)
 * would otherwise type every answer as "JSON or a string". Read a CSV with parseAs: 'text'.
 */
export type AffiliateClient = Client<paths, 'application/json'>;

/**
 * A client whose every method, path, body, query and answer is typed from the OpenAPI document:
 * `client.POST('/api/v1/coupons', { body })` resolves to `{ data, error, response }`, with `data`
 * the documented success body and `error` the documented error body.
 */
export function createAffiliateClient(options: AffiliateClientOptions): AffiliateClient {
  return createClient<paths, 'application/json'>({
    baseUrl: options.baseUrl,
    headers: { authorization: `Bearer ${options.apiKey}` },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}
