/**
 * The console's only way to the system: the public API (/api/v1) with a program's API key, or the
 * admin API (/admin/v1) with the admin token, the same APIs their users already have. The credential
 * lives in this tab's session storage only.
 */
export type Credential = { kind: 'program' | 'operator'; token: string };

const STORAGE_KEY = 'affiliate-console-credential';

export function savedCredential(): Credential | null {
  const saved = sessionStorage.getItem(STORAGE_KEY);
  if (!saved) return null;
  try {
    return JSON.parse(saved) as Credential;
  } catch {
    return null;
  }
}

export const saveCredential = (credential: Credential) => sessionStorage.setItem(STORAGE_KEY, JSON.stringify(credential));
export const forgetCredential = () => sessionStorage.removeItem(STORAGE_KEY);

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
function nextCursorOf(link: string | null): string | null {
  const match = link ? /startingAfter=([^&>]+)[^>]*>;\s*rel="next"/.exec(link) : null;
  return match?.[1] ? decodeURIComponent(match[1]) : null;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function call<T = any>(credential: Credential, method: string, path: string, body?: unknown): Promise<Page<T>> {
  const base = credential.kind === 'operator' ? '/admin/v1' : '/api/v1';
  let response: Response;
  try {
    response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${credential.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
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
