import { ApiError } from '../api';

/**
 * The portal's only way to the system: /portal/api with the session cookie the link set (the browser
 * sends it; the page never sees it), and on writes the session's CSRF token in X-CSRF-Token.
 */
let csrfToken = '';
export const rememberCsrfToken = (token: string) => {
  csrfToken = token;
};

export async function portalCall<T>(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`/portal/api${path}`, {
      method,
      credentials: 'same-origin',
      headers: method === 'GET' ? {} : { 'content-type': 'application/json', 'x-csrf-token': csrfToken },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'The portal could not be reached: check your connection and reload');
  }
  const parsed = (await response.json().catch(() => null)) as { error?: unknown } | null;
  if (!response.ok)
    throw new ApiError(response.status, typeof parsed?.error === 'string' ? parsed.error : `The portal answered ${response.status}`);
  return parsed as T;
}
