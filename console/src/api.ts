import { createApiClient, type ApiClient } from './client';

/**
 * Who the console acts as. A program's team member signs in with an email and a password: the
 * session is an httpOnly cookie the page never sees, and nothing of it is kept in the tab; the page
 * only holds the session's CSRF token, in memory, for the X-CSRF-Token header of every write. The
 * operator signs in with the admin token, which stays in this tab's session storage (as it always
 * has: there is no operator session to hold it instead).
 */
export type Credential = { kind: 'member'; csrfToken: string } | { kind: 'operator'; token: string };

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

/** An answer other than 2xx, with the API's own message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export type Page<T> = { items: T; next: string | null };

/** The id to pass as startingAfter for the next page, from the Link header. */
export function nextCursorOf(link: string | null): string | null {
  const match = link ? /startingAfter=([^&>]+)[^>]*>;\s*rel="next"/.exec(link) : null;
  return match?.[1] ? decodeURIComponent(match[1]) : null;
}

/**
 * The untyped way to the public API, left only for the program pages not yet moved to the typed
 * client (`ok(client.GET(...))`): a member's session (the cookie, and the CSRF token on writes).
 * It goes once the last of them takes PageProps.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function call<T = any>(credential: Credential, method: string, path: string, body?: unknown): Promise<Page<T>> {
  const base = credential.kind === 'operator' ? '/admin/v1' : '/api/v1';
  const signedBy: Record<string, string> =
    credential.kind === 'operator' ? { authorization: `Bearer ${credential.token}` } : { 'x-csrf-token': credential.csrfToken };
  let response: Response;
  try {
    response = await fetch(`${base}${path}`, {
      method,
      credentials: 'same-origin',
      headers: { ...signedBy, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'The gateway could not be reached: check that the system is running');
  }
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  if (!response.ok) {
    const error = (parsed as { error?: unknown; message?: unknown } | null) ?? {};
    const message =
      typeof error.error === 'string'
        ? error.error
        : typeof error.message === 'string'
          ? error.message
          : `The API answered ${response.status}`;
    throw new ApiError(response.status, message);
  }
  return { items: parsed as T, next: nextCursorOf(response.headers.get('link')) };
}

export const query = (params: Record<string, string | number | undefined | null>) => {
  const entries = Object.entries(params).filter(
    (entry): entry is [string, string | number] => entry[1] !== undefined && entry[1] !== null && entry[1] !== '',
  );
  return entries.length === 0
    ? ''
    : `?${entries.map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`).join('&')}`;
};
