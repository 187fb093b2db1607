import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  PORTAL_SESSION_TTL_SECONDS,
  PortalCodeBody,
  PortalLinkBody,
  PortalPayoutDetailsBody,
  shownPayoutDetails,
  type Commission,
  type Coupon,
  type DailyActivity,
  type LinkResponse,
  type Payout,
  type PortalCode,
  type PortalCommission,
  type PortalCoupon,
  type PortalLink,
  type PortalPayout,
  type PortalReferral,
  type PortalSale,
  type PortalSessionInfo,
  type PortalStatementRow,
  type PromotionalCode,
  type Referral,
  type Sale,
} from '@affiliate/contracts';
import {
  AppError,
  badRequest,
  createRouter,
  forbidden,
  parseBody,
  requireJsonBody,
  unauthorized,
  upstreamCodeOf,
  withRequestContext,
  type Logger,
} from '@affiliate/platform';
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import { recordWhenAnswered, type ProgramAuditLog } from '../admin/program-audit-log';
import type { ProgramDocument, ProgramRepository } from '../admin/program-model';
import { portalSettingsOf } from '../admin/program-model';
import { findLiveProgram } from '../admin/programs';
import { cookieNamed, requireSameOriginWrite } from '../browser/same-origin-writes';
import { CONSOLE_CONTENT_SECURITY_POLICY } from '../console/routes';
import { affiliateOf, PORTAL_OPEN_PATH, PORTAL_PATH, portalRefusalOf } from './affiliate-portal';
import type { LinkRefusal, LiveSession, PortalSessions } from './portal-sessions';
import type { ServiceCalls } from './service-calls';

export type PortalRoutesOptions = {
  sessions: PortalSessions;
  programs: ProgramRepository;
  services: ServiceCalls;
  /** Per client address, as the console's and the docs' pages. */
  anonymous: RequestHandler;
  /** The program's audit record, where a change of bank details made in the portal is kept as one made with a key is. */
  audit: ProgramAuditLog;
  logger: Logger;
};

/** Scoped to the portal's own paths: the browser never sends it to /api/v1, /console or /admin. */
export const PORTAL_COOKIE = 'affiliate_portal_session';

/** What the portal sees of one session: its affiliate and program, read from the session, never from the request. */
type Portal = { session: LiveSession; program: ProgramDocument };
const portalOf = (response: Response): Portal => response.locals.portal as Portal;

const DAYS_CHARTED = 30;
const LIST_LIMIT = '100';

const cookieOf = (request: Request) => cookieNamed(request, PORTAL_COOKIE);

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

/** A page of its own for each refusal, server-rendered, with the portal's stylesheet and nothing else. */
function refusalPage(response: Response, status: number, title: string, message: string, returnUrl: string | null): void {
  const back = returnUrl ? `<p><a href="${escapeHtml(returnUrl)}">Back to the program's site</a></p>` : '';
  response
    .status(status)
    .type('html')
    .send(
      `<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>${escapeHtml(title)} · Affiliate portal</title>\n<link rel="stylesheet" href="${PORTAL_PATH}/assets/portal.css">\n</head>\n<body>\n<main class="refusal">\n<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(message)}</p>\n${back}\n</main>\n</body>\n</html>\n`,
    );
}

const LINK_REFUSALS: Record<LinkRefusal, { status: number; title: string; message: string }> = {
  unknown: {
    status: 404,
    title: 'This portal link is not valid',
    message: 'The link is incomplete or was never issued. Ask the program for a new link to your affiliate portal.',
  },
  expired: {
    status: 410,
    title: 'This portal link has expired',
    message: 'Portal links work for 10 minutes. Ask the program for a new link to your affiliate portal.',
  },
  used: {
    status: 410,
    title: 'This portal link has already been used',
    message: 'Each portal link opens the portal once. Ask the program for a new link to your affiliate portal.',
  },
  revoked: {
    status: 410,
    title: 'This portal link has been revoked',
    message: 'The program withdrew this link. Ask the program for a new link to your affiliate portal.',
  },
};

/** A service's refusal passes with its own status, message, code and field; anything else it answered is the portal's to show. */
function answerOf<T>(answer: { status: number; body: unknown }): T {
  if (answer.status >= 400) {
    const body = (answer.body ?? {}) as { error?: unknown; message?: unknown; param?: unknown };
    const message =
      typeof body.error === 'string'
        ? body.error
        : typeof body.message === 'string'
          ? body.message
          : `The service answered ${answer.status}`;
    throw new AppError(answer.status, message, {
      code: upstreamCodeOf(answer.body),
      param: typeof body.param === 'string' ? body.param : null,
    });
  }
  return answer.body as T;
}

const asArray = <T>(body: T | T[] | null): T[] => (body === null ? [] : Array.isArray(body) ? body : [body]);

/** A referred customer's address as its affiliate sees it: enough to recognise, not to harvest. */
const maskedEmail = (email: string) => email.replace(/^(.)[^@]*(@.*)$/, '$1•••$2');

/**
 * The affiliate portal (issue 30, DESIGN.md §11): `/portal/open/{token}` exchanges a single-use link
 * for a session cookie, `/portal` is the page (the console's bundle setup and strict CSP), and
 * `/portal/api/*` is what the page reads and writes. Every call to a service takes the affiliate and
 * the program from the session, never from the request: a route takes no query parameters and its
 * body no ids, so there is nothing to point at another affiliate or program with.
 */
export function portalRoutes(options: PortalRoutesOptions): Router {
  const router = createRouter();
  const { sessions, services } = options;
  const built = join(dirname(require.resolve('@affiliate/console/package.json')), 'dist');
  const page = existsSync(join(built, 'portal.html')) ? readFileSync(join(built, 'portal.html'), 'utf8') : null;
  const readJson = express.json({ limit: '16kb' });

  const secured: RequestHandler = (_request, response, next) => {
    response.setHeader('Content-Security-Policy', CONSOLE_CONTENT_SECURITY_POLICY);
    response.setHeader('X-Content-Type-Options', 'nosniff');
    response.setHeader('Referrer-Policy', 'no-referrer');
    response.setHeader('Cache-Control', 'no-store');
    next();
  };
  router.use(PORTAL_PATH, options.anonymous, secured);

  /** The live session of the cookie, its program live and its affiliate still allowed; the page answers with a page, the API with JSON. */
  const withSession =
    (kind: 'page' | 'api'): RequestHandler =>
    async (request, response, next) => {
      const cookie = cookieOf(request);
      const session = cookie ? await sessions.live(cookie) : null;
      const program = session ? await findLiveProgram(options.programs, session.programId) : null;
      if (!session || !program) {
        if (kind === 'api')
          throw unauthorized(
            'No portal session: open the portal with a link from your program (links work once, for 10 minutes; a session lasts 12 hours)',
            'unauthenticated',
          );
        return refusalPage(
          response,
          401,
          'Your portal session has ended',
          'Open the affiliate portal again with a new link from the program.',
          session?.returnUrl ?? null,
        );
      }
      // Checked on every request, so that a rejected, disabled or deleted affiliate is out at once, whatever its cookie says.
      const refusal = await affiliateOf({ sessions, services }, program._id, session.affiliateId).then(portalRefusalOf, (error: unknown) =>
        error instanceof AppError && error.status === 404 ? 'This affiliate no longer exists' : Promise.reject(error),
      );
      if (refusal) {
        if (kind === 'api') throw forbidden(`${refusal}; the portal session no longer works`, 'portal_session_refused');
        return refusalPage(
          response,
          403,
          'This portal is closed',
          'Your affiliate account cannot use the portal. Contact the program.',
          session.returnUrl,
        );
      }
      response.locals.portal = { session, program } satisfies Portal;
      withRequestContext({ requestId: String(response.locals.requestId), programId: program._id }, () => next());
    };

  /** CSRF on every write (same-origin-writes.ts); SameSite=Lax on the cookie is the third wall. */
  const csrf: RequestHandler = (request, response, next) => {
    requireSameOriginWrite(request, portalOf(response).session.csrfToken, 'portal');
    next();
  };
  const json: RequestHandler = (request, response, next) =>
    requireJsonBody(request, response, (error?: unknown) => (error ? next(error) : readJson(request, response, next)));
  /** A read takes nothing from the query: the session says whose data it is. */
  const noQuery: RequestHandler = (request, _response, next) => {
    const names = Object.keys(request.query as Record<string, unknown>);
    if (names.length > 0)
      throw badRequest(
        `The portal takes no query parameters (got ${names.join(', ')}): the affiliate and the program come from the session`,
        'parameter_unknown',
        names[0],
      );
    next();
  };
  const read = [withSession('api'), noQuery];
  const write = [withSession('api'), noQuery, csrf, json];

  router.get(`${PORTAL_OPEN_PATH}/:token`, async (request, response) => {
    const openable = await sessions.openable(String(request.params.token));
    if (typeof openable === 'string') {
      const refusal = LINK_REFUSALS[openable];
      return refusalPage(response, refusal.status, refusal.title, refusal.message, null);
    }
    const program = await findLiveProgram(options.programs, openable.programId);
    if (!program)
      return refusalPage(
        response,
        404,
        'This program no longer exists',
        'The affiliate program of this link has been closed.',
        openable.returnUrl,
      );
    const affiliate = await affiliateOf({ sessions, services }, program._id, openable.affiliateId).catch((error: unknown) =>
      error instanceof AppError && error.status === 404 ? null : Promise.reject(error),
    );
    if (!affiliate || portalRefusalOf(affiliate)) {
      return refusalPage(
        response,
        403,
        'This portal is closed',
        'Your affiliate account cannot use the portal. Contact the program.',
        openable.returnUrl,
      );
    }
    const opened = await sessions.open(program._id, openable);
    if (opened === 'used')
      return refusalPage(response, LINK_REFUSALS.used.status, LINK_REFUSALS.used.title, LINK_REFUSALS.used.message, openable.returnUrl);
    response.cookie(PORTAL_COOKIE, opened.cookie, {
      httpOnly: true,
      secure: true,
      sameSite: 'lax',
      path: PORTAL_PATH,
      maxAge: PORTAL_SESSION_TTL_SECONDS * 1000,
    });
    response.redirect(303, `${PORTAL_PATH}/`);
  });

  router.get([PORTAL_PATH, `${PORTAL_PATH}/`], withSession('page'), (_request, response) => {
    if (!page) {
      response.status(503).type('text/plain').send('The portal is not built: run npm run build');
      return;
    }
    response.type('html').send(page);
  });
  router.use(`${PORTAL_PATH}/assets`, express.static(join(built, 'assets'), { index: false, maxAge: '1h', fallthrough: true }));

  router.get(`${PORTAL_PATH}/api/session`, ...read, async (_request, response) => {
    const { session, program } = portalOf(response);
    const affiliate = await affiliateOf({ sessions, services }, program._id, session.affiliateId);
    const settings = portalSettingsOf(program);
    const coupons: PortalCoupon[] = [];
    for (const couponId of settings.affiliateCouponIds) {
      const answer = await services.coupon.request<Coupon>({
        method: 'GET',
        path: '/coupons',
        programId: program._id,
        query: { id: couponId },
      });
      // A coupon deleted or made invalid since it was offered is simply no longer offered.
      if (answer.status !== 200 || !answer.body.valid) continue;
      const { id, name, couponType, percentOff, amountOff, currency, duration } = answer.body;
      coupons.push({ id, name, couponType, percentOff, amountOff, currency, duration });
    }
    response.json({
      affiliate: {
        id: affiliate.id,
        firstName: affiliate.firstName,
        lastName: affiliate.lastName,
        email: affiliate.email,
        payoutDetails: shownPayoutDetails(affiliate.payoutDetails),
      },
      program: { name: program.name, affiliatesMayAddLinks: settings.affiliatesMayAddLinks, coupons },
      csrfToken: session.csrfToken,
      returnUrl: session.returnUrl,
      expiresAt: session.expiresAt?.toISOString() ?? null,
    } satisfies PortalSessionInfo);
  });

  router.get(`${PORTAL_PATH}/api/links`, ...read, async (_request, response) => {
    const { session, program } = portalOf(response);
    const links = answerOf<LinkResponse[]>(
      await services.affiliate.request({
        method: 'GET',
        path: '/links',
        programId: program._id,
        query: { affiliateId: session.affiliateId },
      }),
    );
    response.json(
      links.map(
        ({ id, link, clicks, referrals, sales, revenueByCurrency, fullURLs }) =>
          ({ id, link, clicks, referrals, sales, revenueByCurrency, fullURLs }) satisfies PortalLink,
      ),
    );
  });

  router.get(`${PORTAL_PATH}/api/activity`, ...read, async (_request, response) => {
    const { session, program } = portalOf(response);
    const query = { affiliateId: session.affiliateId, days: String(DAYS_CHARTED) };
    response.json(
      answerOf<DailyActivity[]>(
        await services.affiliate.request({ method: 'GET', path: '/internal/affiliate-daily-activity', programId: program._id, query }),
      ),
    );
  });

  router.get(`${PORTAL_PATH}/api/referrals`, ...read, async (_request, response) => {
    const { session, program } = portalOf(response);
    const referrals = asArray(
      answerOf<Referral | Referral[] | null>(
        await services.referral.request({
          method: 'GET',
          path: '/referrals',
          programId: program._id,
          query: { affiliateId: session.affiliateId, limit: LIST_LIMIT },
        }),
      ),
    );
    response.json(
      referrals.map(
        (referral) =>
          ({
            id: referral.id,
            email: maskedEmail(referral.email),
            status: referral.status,
            createdAt: referral.createdAt,
          }) satisfies PortalReferral,
      ),
    );
  });

  router.get(`${PORTAL_PATH}/api/sales`, ...read, async (_request, response) => {
    const { session, program } = portalOf(response);
    const sales = asArray(
      answerOf<Sale | Sale[] | null>(
        await services.sale.request({
          method: 'GET',
          path: '/sales',
          programId: program._id,
          query: { affiliateId: session.affiliateId, limit: LIST_LIMIT },
        }),
      ),
    );
    response.json(
      sales.map(
        (sale) =>
          ({
            id: sale.id,
            paidAt: sale.paidAt,
            totalEarned: sale.totalEarned,
            currency: sale.currency,
            commissionEarned: sale.commissionEarned,
            promoCode: sale.promoCode,
            commissionStatus: sale.commissions[0]?.status ?? null,
          }) satisfies PortalSale,
      ),
    );
  });

  router.get(`${PORTAL_PATH}/api/commissions`, ...read, async (_request, response) => {
    const { session, program } = portalOf(response);
    const commissions = answerOf<(Commission & { saleId: string })[]>(
      await services.sale.request({
        method: 'GET',
        path: '/commissions',
        programId: program._id,
        query: { affiliateId: session.affiliateId, limit: LIST_LIMIT },
      }),
    );
    // The risk signals and review decisions stay the program's: the affiliate sees amount, status and dates.
    response.json(
      commissions.map(
        ({ id, saleId, amount, currency, status, availableAt, payoutId }) =>
          ({ id, saleId, amount, currency, status, availableAt, payoutId }) satisfies PortalCommission,
      ),
    );
  });

  router.get(`${PORTAL_PATH}/api/payouts`, ...read, async (_request, response) => {
    const { session, program } = portalOf(response);
    const payouts = asArray(
      answerOf<Payout | Payout[] | null>(
        await services.sale.request({
          method: 'GET',
          path: '/payouts',
          programId: program._id,
          query: { affiliateId: session.affiliateId, limit: LIST_LIMIT },
        }),
      ),
    );
    response.json(
      payouts.map(
        ({ id, amount, currency, status, createdAt, paidAt }) =>
          ({ id, amount, currency, status, createdAt, paidAt }) satisfies PortalPayout,
      ),
    );
  });

  // Summed in the sale service's database per currency (not its statement, a heavy operation a few of which a program may run at once).
  router.get(`${PORTAL_PATH}/api/statement`, ...read, async (_request, response) => {
    const { session, program } = portalOf(response);
    const query = { affiliateId: session.affiliateId };
    response.json(
      answerOf<PortalStatementRow[]>(
        await services.sale.request({ method: 'GET', path: '/internal/affiliate-balances', programId: program._id, query }),
      ),
    );
  });

  router.get(`${PORTAL_PATH}/api/codes`, ...read, async (_request, response) => {
    const { session, program } = portalOf(response);
    const codes = asArray(
      answerOf<PromotionalCode | PromotionalCode[] | null>(
        await services.coupon.request({
          method: 'GET',
          path: '/promotional-codes',
          programId: program._id,
          query: { affiliateId: session.affiliateId, limit: LIST_LIMIT },
        }),
      ),
    );
    response.json(codes.map(toPortalCode));
  });

  /**
   * Bank details changed in the portal go to the program's audit record as a key's change does
   * (bank_details.changed, refusals included), the actor being the session, its affiliate and the key
   * that made the session. A session made before the key was kept with it cannot change them.
   */
  const audited: RequestHandler = (request, response, next) => {
    const { session, program } = portalOf(response);
    if (!session.createdBy)
      throw forbidden(
        'This portal session was opened before bank details changes were recorded: open the portal again with a new link to change them',
        'portal_session_refused',
      );
    const actor = { ...session.createdBy, affiliatePortalSessionId: session._id, affiliateId: session.affiliateId };
    recordWhenAnswered(
      options.audit,
      options.logger,
      program._id,
      { actor, action: 'bank_details.changed', operation: `${request.method} ${request.path}` },
      response,
    );
    next();
  };

  router.put(`${PORTAL_PATH}/api/payout-details`, ...write, audited, async (request, response) => {
    const { session, program } = portalOf(response);
    const { payoutDetails } = parseBody(PortalPayoutDetailsBody, request);
    const body = { affiliateId: session.affiliateId, payoutDetails };
    const updated = answerOf<{ payoutDetails: unknown }>(
      await services.affiliate.request({ method: 'PUT', path: '/affiliates', programId: program._id, body }),
    );
    response.json({ payoutDetails: updated.payoutDetails });
  });

  router.post(`${PORTAL_PATH}/api/links`, ...write, async (request, response) => {
    const { session, program } = portalOf(response);
    const { link } = parseBody(PortalLinkBody, request);
    if (!portalSettingsOf(program).affiliatesMayAddLinks)
      throw forbidden('This program does not let affiliates add links: ask the program for another link', 'forbidden');
    const created = answerOf<LinkResponse>(
      await services.affiliate.request({
        method: 'POST',
        path: '/links',
        programId: program._id,
        body: { affiliateId: session.affiliateId, link },
      }),
    );
    response.json({
      id: created.id,
      link: created.link,
      clicks: created.clicks,
      referrals: created.referrals,
      sales: created.sales,
      revenueByCurrency: created.revenueByCurrency,
      fullURLs: created.fullURLs,
    } satisfies PortalLink);
  });

  router.post(`${PORTAL_PATH}/api/codes`, ...write, async (request, response) => {
    const { session, program } = portalOf(response);
    const { couponId, code } = parseBody(PortalCodeBody, request);
    if (!portalSettingsOf(program).affiliateCouponIds.includes(couponId)) {
      throw badRequest(
        `Coupon ${couponId} is not offered to affiliates: choose one of the coupons the portal lists`,
        'parameter_invalid',
        'couponId',
      );
    }
    // As /session lists them: a coupon deleted or no longer valid since it was offered is not offered any more.
    const coupon = await services.coupon.request<Coupon>({
      method: 'GET',
      path: '/coupons',
      programId: program._id,
      query: { id: couponId },
    });
    if (coupon.status !== 200 || !coupon.body.valid) {
      throw badRequest(
        `Coupon ${couponId} is no longer valid: choose one of the coupons the portal lists`,
        'parameter_invalid',
        'couponId',
      );
    }
    // The coupon service applies the specification's code rules (characters, length, unique in the program, case-insensitively) and emits promocode.created.
    const body = { couponId, code, affiliateId: session.affiliateId, isAffiliateGenerated: true };
    response.json(
      toPortalCode(
        answerOf<PromotionalCode>(
          await services.coupon.request({ method: 'POST', path: '/promotional-codes', programId: program._id, body }),
        ),
      ),
    );
  });

  router.post(`${PORTAL_PATH}/api/sign-out`, withSession('api'), noQuery, csrf, async (_request, response) => {
    const { session, program } = portalOf(response);
    await sessions.revoke(program._id, session._id);
    response.clearCookie(PORTAL_COOKIE, { httpOnly: true, secure: true, sameSite: 'lax', path: PORTAL_PATH });
    response.json({ signedOut: true, returnUrl: session.returnUrl });
  });

  router.use(`${PORTAL_PATH}/api`, (request) => {
    throw new AppError(404, `No portal route for ${request.method} ${request.path}`, { code: 'route_missing' });
  });
  return router;
}

function toPortalCode(code: PromotionalCode): PortalCode {
  const { coupon } = code;
  return {
    id: code.id,
    code: code.code,
    active: code.active,
    timesRedeemed: code.timesRedeemed,
    isAffiliateGenerated: code.isAffiliateGenerated,
    coupon: {
      id: coupon.id,
      name: coupon.name,
      couponType: coupon.couponType,
      percentOff: coupon.percentOff,
      amountOff: coupon.amountOff,
      currency: coupon.currency,
    },
  };
}
