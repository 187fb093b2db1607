import { AffiliateApiError } from '@affiliate/client/errors';
import type { components, operations, paths } from '@affiliate/client';
import createClient, { type Client } from 'openapi-fetch';

/**
 * The console's one way to the public API: openapi-fetch over the document's own `paths`, the types
 * @affiliate/client is generated with, so no page declares an API type of its own (issue 32). Pages
 * take an `ApiClient`; who it signs in as (a team member's session cookie and CSRF token, or an API
 * key in a test) is the client's business, never the page's.
 */
export type ApiClient = Client<paths, 'application/json'>;

/** The document's objects (Affiliate, Sale, CommissionPlan, ...), as the pages show them. */
export type Schemas = components['schemas'];

/** An operation of the document by its id (createCoupon, getPayouts, ...): what a role may do is told by these. */
export type OperationId = keyof operations;

/**
 * What every page of a program is given: the client, and whether the signed-in member's role may make
 * an operation (from the session's `allowedOperations`, the server's own judgement). A page leaves
 * out what `can` refuses; the gateway refuses it anyway.
 */
export type PageProps = { client: ApiClient; can: (operation: OperationId) => boolean };

export { AffiliateApiError };

/** A client for this origin's /api/v1 with the given headers (the CSRF token of a session, or a key's Authorization). */
export function createApiClient(headers: Record<string, string>): ApiClient {
  return createClient<paths, 'application/json'>({ baseUrl: window.location.origin, headers, credentials: 'same-origin' });
}

/**
 * The one idiom for a call: the answer's data, or its error thrown as an AffiliateApiError (the API's
 * message, `code`, `param` and `errors`, which forms show beside their fields).
 * `const sales = await ok(client.GET('/api/v1/sales', { params: { query: { limit: 20 } } }))`
 */
export async function ok<Data>(answer: Promise<{ data?: Data; error?: unknown; response: Response }>): Promise<Data> {
  let settled: { data?: Data; error?: unknown; response: Response };
  try {
    settled = await answer;
  } catch {
    throw new AffiliateApiError(
      0,
      'The gateway could not be reached: check that the system is running',
      undefined,
      undefined,
      undefined,
      undefined,
      null,
    );
  }
  if (!settled.response.ok) throw AffiliateApiError.from(settled.response, settled.error);
  return settled.data as Data;
}
