import { constantTimeEquals, forbidden } from '@affiliate/platform';
import type { Request } from 'express';

export const CSRF_HEADER = 'x-csrf-token';

/** The gateway's own origin as the browser reached it (trust proxy decides which forwarding headers count). */
export const originOf = (request: Request) => `${request.protocol}://${request.get('host')}`;

/** The value of one cookie of the request, or null. */
export function cookieNamed(request: Request, cookie: string): string | null {
  for (const part of (request.header('cookie') ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === cookie) return value.join('=');
  }
  return null;
}

/**
 * CSRF on a write of a cookie session (the affiliate portal's, the console's), two checks. The
 * session's CSRF token (synchronizer pattern: random per session, kept server-side, given only to a
 * same-origin page) must come back in X-CSRF-Token: a custom header cannot be sent cross-origin without
 * a CORS preflight, which the gateway never answers for these routes, so a forged form or script from
 * another site cannot carry it. And the Origin (every browser sends it on a POST, PUT or DELETE) must
 * be this gateway's, which also refuses a same-site sibling (another subdomain). `pages` names whose
 * pages these are in the refusal.
 */
export function requireSameOriginWrite(request: Request, csrfToken: string, pages: 'portal' | 'console'): void {
  const origin = request.header('origin');
  // Required: every browser sends Origin on a write, so a write without one is not from the page.
  if (origin === undefined)
    throw forbidden(
      `Missing Origin header: the ${pages} only accepts writes from its own pages (${originOf(request)})`,
      'origin_not_allowed',
    );
  if (origin !== originOf(request))
    throw forbidden(
      `Cross-origin write refused: the ${pages} only accepts writes from its own pages (${originOf(request)})`,
      'origin_not_allowed',
    );
  if (!constantTimeEquals(request.header(CSRF_HEADER) ?? '', csrfToken))
    throw forbidden(`Missing or wrong X-CSRF-Token: reload the ${pages} and try again`, 'csrf_token_invalid');
}
