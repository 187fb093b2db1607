import { createHash } from 'node:crypto';
import { BrowserClickBody, BrowserReferralBody, type BrowserClick } from '@affiliate/contracts';
import { AppError, errorResponseBody, forbidden, parseBody, requestIdOf } from '@affiliate/platform';
import express, { type Request, type RequestHandler, type Response } from 'express';
import { callerOf, type Caller, type KeyCaller } from '../auth/authenticate';
import type { RateLimit } from '../config';
import type { Route } from '../proxy/route-table';
import type { CapturedResponse } from '../proxy/upstream-proxy';
import type { KnownOrigins } from './known-origins';
import type { RateLimits } from '../rate-limit/rate-limiter';

/**
 * The two calls a web page makes with a publishable key (DESIGN.md §11): record a click, and create
 * a referral from a click or a visitor. Each takes a narrower body than the secret-key route it
 * forwards to, gets the visitor's address and user agent from the request itself (a page cannot
 * claim someone else's), and answers with less: nothing about affiliates or other customers.
 */
type BrowserRoute = {
  route: Route;
  toInternalBody: (request: Request, caller: Caller) => Record<string, unknown>;
  toAnswer: (upstream: Record<string, unknown>, caller: Caller) => Record<string, unknown>;
  /** When set, a refusal by the service (a 4xx other than 429) is answered 400 with this message instead of the service's own. */
  refusal?: string;
};

const BROWSER_ROUTES: Record<string, BrowserRoute> = {
  '/browser/clicks': {
    route: { upstream: 'affiliate', path: '/clicks' },
    toInternalBody: (request) => ({ ...parseBody(BrowserClickBody, request), ...visitorOf(request) }),
    toAnswer: (click, caller): BrowserClick => ({
      clickId: click.clickId as number | null,
      counted: click.counted as boolean,
      reason: click.reason as BrowserClick['reason'],
      attributionWindowDays: caller.attributionWindowDays,
      attributionModel: caller.attributionModel,
    }),
  },
  '/browser/referrals': {
    route: { upstream: 'referral', path: '/referrals' },
    toInternalBody: (request) => {
      const { externalId, ...referral } = parseBody(BrowserReferralBody, request);
      return { ...referral, ...(externalId === undefined ? {} : { referredUserExternalId: externalId }) };
    },
    toAnswer: (referral) => ({ ok: true, referralId: referral.id }),
    // Which of these it was would tell a page what it may not know: whether a customer's email is
    // already a referral of the program, or whether a click id exists. The page learns only that it failed.
    refusal:
      'The referral could not be created: the click or visitor is not one of this program within its attribution window, or this customer is already referred',
  },
};

export const BROWSER_PATHS = Object.keys(BROWSER_ROUTES);

const browserRouteOf = (path: string): BrowserRoute | undefined =>
  Object.hasOwn(BROWSER_ROUTES, path.replace(/\/$/, '')) ? BROWSER_ROUTES[path.replace(/\/$/, '')] : undefined;

/** The address and user agent the click is judged by; an IPv4-mapped IPv6 address is given as IPv4. */
function visitorOf(request: Request): { ipAddress?: string; userAgent?: string } {
  const address = request.ip?.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1');
  const userAgent = request.header('user-agent')?.slice(0, 1000);
  return { ...(address ? { ipAddress: address } : {}), ...(userAgent ? { userAgent } : {}) };
}

/**
 * CORS preflights of the browser routes. A preflight carries no credential, so it cannot know the
 * program: it is answered for an origin that some program allows (and no other), which only lets the
 * browser send the real request; that one answers CORS, and does anything, only for an origin in its
 * own program's `allowedOrigins`. No other route answers a preflight.
 */
export function browserPreflight(knownOrigins: Pick<KnownOrigins, 'has'>): RequestHandler {
  return (request, response, next) => {
    if (request.method !== 'OPTIONS' || !browserRouteOf(request.path)) return next();
    const origin = request.header('origin');
    response.setHeader('Vary', 'Origin');
    if (origin && knownOrigins.has(origin)) {
      response.setHeader('Access-Control-Allow-Origin', origin);
      response.setHeader('Access-Control-Allow-Methods', 'POST');
      response.setHeader('Access-Control-Allow-Headers', 'authorization, content-type');
      response.setHeader('Access-Control-Max-Age', '600');
    }
    response.status(204).end();
  };
}

export type CredentialScopeOptions = {
  rateLimits: RateLimits;
  /** Browser calls per publishable key and client address. */
  browserAddressLimit: RateLimit;
};

const PUBLISHABLE_ONLY =
  'A publishable key can only record clicks (POST /api/v1/browser/clicks) and create referrals from a click or visitor (POST /api/v1/browser/referrals); use a secret API key from your backend for everything else';
const SECRET_IN_BROWSER_ROUTE = 'The browser routes take a publishable key (pk_…): a secret API key must never be sent from a web page';
const MEMBER_IN_BROWSER_ROUTE = "The browser routes take a publishable key (pk_…) from a shop's pages, not a console session";

/**
 * What each credential may reach. A secret key, or a team member's console session: every route but
 * the browser ones (what a member's role allows is requireScopes's judgement). A publishable
 * key: the browser routes only, from its program's allowed origins only, limited per client
 * address; its body is rewritten for the service and its answer narrowed on the way back.
 */
export function credentialScope(options: CredentialScopeOptions): RequestHandler {
  const readJson = express.json({ limit: '16kb', type: () => true });
  return async (request, response, next) => {
    const caller = callerOf(response);
    const browserRoute = browserRouteOf(request.path);
    if (caller.credential !== 'publishable') {
      if (browserRoute)
        throw forbidden(caller.credential === 'member' ? MEMBER_IN_BROWSER_ROUTE : SECRET_IN_BROWSER_ROUTE, 'key_type_not_allowed');
      return next();
    }
    if (!browserRoute || request.method !== 'POST') throw forbidden(PUBLISHABLE_ONLY, 'key_type_not_allowed');
    const origin = request.header('origin');
    if (!origin || !caller.allowedOrigins.includes(origin)) {
      throw forbidden(
        origin
          ? `The origin ${origin} is not allowed to use this program's publishable keys: add it to allowedOrigins (PUT /api/v1/program)`
          : 'A publishable key is for web pages: the request must come from a browser on one of the allowed origins (Origin header)',
        'origin_not_allowed',
      );
    }
    response.setHeader('Access-Control-Allow-Origin', origin);
    response.setHeader('Vary', 'Origin');
    await limitPerAddress(options, caller, request, response);
    // An Idempotency-Key from a page is not honoured: answers are narrowed after the service's, so there is nothing to replay.
    delete request.headers['idempotency-key'];
    await new Promise<void>((resolve, reject) =>
      readJson(request, response, (error?: unknown) => (error ? reject(error as Error) : resolve())),
    );
    request.body = Buffer.from(JSON.stringify(browserRoute.toInternalBody(request, caller)));
    request.url = browserRoute.route.path;
    response.locals.route = browserRoute.route;
    response.locals.narrowAnswer = (captured: CapturedResponse) =>
      narrowed(captured, (body) => browserRoute.toAnswer(body, caller), browserRoute.refusal, requestIdOf(response));
    next();
  };
}

async function limitPerAddress(options: CredentialScopeOptions, caller: KeyCaller, request: Request, response: Response): Promise<void> {
  const limiterKey = createHash('sha256')
    .update(`browser\n${caller.keyHash}\n${request.ip ?? 'unknown'}`)
    .digest('base64url');
  const verdict = await options.rateLimits.consume(limiterKey, options.browserAddressLimit);
  if (!verdict.allowed) {
    response.setHeader('Retry-After', String(verdict.resetSeconds));
    throw new AppError(429, `Too many browser calls from this address with this publishable key; retry after ${verdict.resetSeconds} s`, {
      code: 'address_rate_limited',
    });
  }
}

/** A successful answer is replaced by its narrowed form; a refusal passes as it is, or as the route's one generic refusal. */
function narrowed(
  captured: CapturedResponse,
  toAnswer: (body: Record<string, unknown>) => Record<string, unknown>,
  refusal: string | undefined,
  requestId: string,
): Promise<void> {
  if (refusal && captured.status >= 400 && captured.status < 500 && captured.status !== 429) {
    captured.status = 400;
    captured.body = Buffer.from(JSON.stringify(errorResponseBody(400, refusal, 'plain', { code: 'attribution_failed', requestId })));
    captured.headers['content-type'] = 'application/json; charset=utf-8';
    return Promise.resolve();
  }
  if (captured.status !== 200) return Promise.resolve();
  const body = JSON.parse(captured.body.toString('utf8')) as Record<string, unknown>;
  captured.body = Buffer.from(JSON.stringify(toAnswer(body)));
  captured.headers['content-type'] = 'application/json; charset=utf-8';
  return Promise.resolve();
}

export type NarrowAnswer = (captured: CapturedResponse) => Promise<void>;

export function narrowAnswerOf(response: Response): NarrowAnswer | undefined {
  return response.locals.narrowAnswer as NarrowAnswer | undefined;
}
