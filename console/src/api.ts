import { createApiClient, type ApiClient } from './client';

/**
 * Who the console acts as. A program's team member signs in with an email and a password: the
 * session is an httpOnly cookie the page never sees, and nothing of it is kept in the tab; the page
 * only holds the session's CSRF token, in memory, for the X-CSRF-Token header of every write. The
 * operator signs in with the admin token, which stays in this tab's session storage (as it always
 * has: there is no operator session to hold it instead).
 */
const STORAGE_KEY = 'affiliate-console-credential';

/** The operator's admin token kept in this tab, if the operator signed in. */
export function savedAdminToken(): string | null {
  const saved = sessionStorage.getItem(STORAGE_KEY);
  if (!saved) return null;
  try {
    const credential = JSON.parse(saved) as { kind?: unknown; token?: unknown };
    if (credential.kind === 'operator' && typeof credential.token === 'string') return credential.token;
  } catch {
    // Unreadable: dropped below like any other leftover.
  }
  // A program's API key an older console kept here: members no longer sign in with one, so it goes.
  sessionStorage.removeItem(STORAGE_KEY);
  return null;
}

export const saveAdminToken = (token: string) => sessionStorage.setItem(STORAGE_KEY, JSON.stringify({ kind: 'operator', token }));
export const forgetAdminToken = () => sessionStorage.removeItem(STORAGE_KEY);

/**
 * The typed client for a member's session (the cookie goes by itself; writes carry the CSRF token).
 * A 401 means the session is gone (idle too long, signed out elsewhere, ended by a role change): a
 * member's client meets no other, so `onEnded` takes the page back to the sign-in.
 */
export function memberClient(csrfToken: string, onEnded: () => void = () => undefined): ApiClient {
  const client = createApiClient({ 'x-csrf-token': csrfToken });
  client.use({
    onResponse({ response }) {
      if (response.status === 401) onEnded();
    },
  });
  return client;
}

/** The typed client for the admin API, with the operator's admin token. */
export const operatorClient = (token: string): ApiClient => createApiClient({ authorization: `Bearer ${token}` });

/** An answer other than 2xx, with the API's own message (the affiliate portal's calls). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}
