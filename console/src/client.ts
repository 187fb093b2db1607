import createClient, { type Client } from 'openapi-fetch';
import type { paths } from '@affiliate/client';

/**
 * The console's one way to the public API: openapi-fetch over the document's own `paths`, the types
 * @affiliate/client is generated with, so no page declares an API type of its own (issue 32). Pages
 * take an `ApiClient`; who it signs in as (a team member's session cookie and CSRF token, or an API
 * key in a test) is the client's business, never the page's.
 */
export type ApiClient = Client<paths, 'application/json'>;

/** A client for this origin's /api/v1 with the given headers (the CSRF token of a session, or a key's Authorization). */
export function createApiClient(headers: Record<string, string>): ApiClient {
  return createClient<paths, 'application/json'>({ baseUrl: window.location.origin, headers, credentials: 'same-origin' });
}
