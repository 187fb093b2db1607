import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { ProgramSlug, signupAnswerProblems, signupAnswersOf, SignupSubmission, type SignupAffiliateBody } from '@affiliate/contracts';
import {
  AppError,
  createRouter,
  forbidden,
  INTERNAL_TOKEN_HEADER,
  InvalidRequest,
  notFound,
  PROGRAM_ID_HEADER,
  REQUEST_ID_HEADER,
  type Problem,
} from '@affiliate/platform';
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import type { ProgramDocument, ProgramRepository } from '../admin/program-model';
import { CONSOLE_CONTENT_SECURITY_POLICY } from '../console/routes';
import type { RateLimit } from '../config';
import type { CapturedResponse, UpstreamProxy } from '../proxy/upstream-proxy';
import type { RateLimits } from '../rate-limit/rate-limiter';
import {
  FORM_TOKEN_FIELD,
  HONEYPOT_FIELD,
  renderNotFound,
  renderSignupForm,
  renderSignupResult,
  SIGNUP_STYLESHEET,
  SIGNUP_STYLESHEET_PATH,
  type FilledForm,
  type SignupPageProgram,
} from './page';

export type SignupRoutesOptions = {
  programs: ProgramRepository;
  /** The affiliate service, which creates the affiliate (POST /signups, internal). */
  affiliate: UpstreamProxy;
  rateLimits: RateLimits;
  /** Submissions per program and client address. */
  signupAddressLimit: RateLimit;
  /** Per client address, as every route without a credential. */
  anonymous: RequestHandler;
  internalToken: string;
};

/** Where the gateway sends a validated application inside. */
export const SIGNUP_UPSTREAM_PATH = '/signups';
/** A form older than this is refused (the applicant reloads the page): long enough to fill in, short enough that a harvested token soon dies. */
const FORM_TOKEN_SECONDS = 2 * 60 * 60;
const BODY_LIMIT = '64kb';

type SignupProgram = ProgramDocument & { slug: string; signup: NonNullable<ProgramDocument['signup']> };

const pageProgramOf = (program: SignupProgram): SignupPageProgram => ({ name: program.name, slug: program.slug, signup: program.signup });

/**
 * The console's CSP, but the page may be framed by the program's allowedOrigins (the embeddable
 * form) and by nobody else; without allowed origins, by nobody ('none', as the console).
 */
function contentSecurityPolicyOf(program: ProgramDocument | null): string {
  const ancestors = program?.allowedOrigins?.length ? program.allowedOrigins.join(' ') : "'none'";
  return CONSOLE_CONTENT_SECURITY_POLICY.replace("frame-ancestors 'none'", `frame-ancestors ${ancestors}`);
}

function sendPage(response: Response, status: number, program: ProgramDocument | null, html: string): void {
  response.setHeader('Content-Security-Policy', contentSecurityPolicyOf(program));
  response.setHeader('X-Content-Type-Options', 'nosniff');
  // Not the console's no-referrer: under it Chromium sends `Origin: null` with the form's own POST,
  // and the Origin is what the form route checks. same-origin still tells no other site anything.
  response.setHeader('Referrer-Policy', 'same-origin');
  response.setHeader('Cache-Control', 'no-store');
  response.status(status).type('html').send(html);
}

/**
 * The hosted sign-up of each program (README, "Sign-up and approval"): `GET /join/{slug}` is the
 * form, `POST /join/{slug}` takes it form-encoded from that page, or JSON from the program's own form.
 *
 * CSRF. Nobody is signed in here, so a forged submission gains an attacker no one's authority; what
 * is protected is that the form-encoded route only takes what the hosted page sent: the browser's
 * Origin must be this gateway's own origin (a page elsewhere posting the form is refused), and the
 * form carries a token signed by the gateway (HMAC of the program and the time it was served) that
 * lives two hours. No cookie is used on purpose: the page is embedded in iframes on the program's
 * sites, where a browser blocks third-party cookies (SameSite=Lax/Strict ones are never sent there),
 * so a cookie-bound token would break the embedded form; Origin plus a signed token works in both.
 *
 * CORS. The JSON route is a public API for the program's own pages: a browser request is answered
 * (and the preflight allowed) only for an Origin in the program's allowedOrigins; a request without
 * an Origin (the program's backend) is taken, since it cannot ride on anyone's browser.
 */
export function signupRoutes(options: SignupRoutesOptions): Router {
  const router = createRouter();
  const tokenKey = createHash('sha256').update(`signup-form-token\n${options.internalToken}`).digest();
  const formToken = (programId: string, issuedAt = Math.floor(Date.now() / 1000)) =>
    `${issuedAt}.${createHmac('sha256', tokenKey).update(`${programId}\n${issuedAt}`).digest('base64url')}`;
  const isValidFormToken = (programId: string, token: unknown): boolean => {
    if (typeof token !== 'string' || !/^\d{1,12}\.[A-Za-z0-9_-]{43}$/.test(token)) return false;
    const issuedAt = Number(token.split('.')[0]);
    const age = Math.floor(Date.now() / 1000) - issuedAt;
    if (age < 0 || age > FORM_TOKEN_SECONDS) return false;
    return timingSafeEqual(Buffer.from(formToken(programId, issuedAt)), Buffer.from(token));
  };

  const openSignup = async (request: Request): Promise<SignupProgram | null> => {
    const slug = String(request.params.slug ?? '');
    if (!ProgramSlug.safeParse(slug).success) return null;
    const program = await options.programs.bySlug(slug);
    return program?.slug && program.signup?.enabled ? (program as SignupProgram) : null;
  };

  router.get(SIGNUP_STYLESHEET_PATH, options.anonymous, (_request, response) => {
    response.setHeader('X-Content-Type-Options', 'nosniff');
    response.setHeader('Cache-Control', 'public, max-age=300');
    response.type('css').send(SIGNUP_STYLESHEET);
  });

  router.get('/join/:slug', options.anonymous, async (request, response) => {
    const program = await openSignup(request);
    if (!program) return sendPage(response, 404, null, renderNotFound());
    sendPage(response, 200, program, renderSignupForm(pageProgramOf(program), formToken(program._id)));
  });

  router.options('/join/:slug', options.anonymous, async (request, response) => {
    const program = await openSignup(request);
    const origin = request.header('origin');
    response.setHeader('Vary', 'Origin');
    if (program && origin && program.allowedOrigins?.includes(origin)) {
      response.setHeader('Access-Control-Allow-Origin', origin);
      response.setHeader('Access-Control-Allow-Methods', 'POST');
      response.setHeader('Access-Control-Allow-Headers', 'content-type');
      response.setHeader('Access-Control-Max-Age', '600');
    }
    response.status(204).end();
  });

  const json = express.json({ limit: BODY_LIMIT });
  const form = express.urlencoded({ extended: false, limit: BODY_LIMIT, parameterLimit: 100 });

  router.post('/join/:slug', options.anonymous, async (request, response, next) => {
    const program = await openSignup(request);
    const isForm = request.is('application/x-www-form-urlencoded') === 'application/x-www-form-urlencoded';
    if (!program) {
      if (isForm) return sendPage(response, 404, null, renderNotFound());
      throw notFound(`No sign-up page at /join/${String(request.params.slug ?? '')}`);
    }
    if (!isForm && request.is('application/json') !== 'application/json') {
      throw new AppError(
        415,
        "Send the application as application/json (a program's own form) or application/x-www-form-urlencoded (the hosted page)",
        { code: 'unsupported_media_type' },
      );
    }
    const origin = request.header('origin');
    if (isForm) {
      if (origin !== ownOriginOf(request)) throw forbidden('The sign-up form can only be sent from its own page', 'origin_not_allowed');
    } else if (origin !== undefined) {
      if (!program.allowedOrigins?.includes(origin)) {
        throw forbidden(
          `The origin ${origin} may not send applications to this program: the program adds it to allowedOrigins (PUT /api/v1/program)`,
          'origin_not_allowed',
        );
      }
      response.setHeader('Access-Control-Allow-Origin', origin);
      response.setHeader('Vary', 'Origin');
    }
    await limitPerAddress(options, program._id, request, response);
    await new Promise<void>((resolve, reject) =>
      (isForm ? form : json)(request, response, (error?: unknown) => (error ? reject(error as Error) : resolve())),
    );
    return isForm ? submitForm(program, request, response, next) : submitJson(program, request, response, next);
  });

  /** The hosted page's submission: every answer is an HTML page (the form again with its problems, or the result). */
  async function submitForm(program: SignupProgram, request: Request, response: Response, next: (error?: unknown) => void): Promise<void> {
    const fields = (request.body ?? {}) as Record<string, unknown>;
    const filled = filledFormOf(fields);
    const pageProgram = pageProgramOf(program);
    const refuse = (problems: string[]) =>
      sendPage(response, 400, program, renderSignupForm(pageProgram, formToken(program._id), filled, problems));
    if (!isValidFormToken(program._id, fields[FORM_TOKEN_FIELD]))
      return refuse(['This form has expired: check your answers and send it again']);
    // A bot that filled the hidden field is told what a person would be, and nothing is created.
    if (typeof fields[HONEYPOT_FIELD] === 'string' && fields[HONEYPOT_FIELD] !== '') {
      return sendPage(response, 200, program, renderSignupResult(pageProgram, program.requireApproval ? 'PENDING' : 'ACTIVE'));
    }
    const problems = applicationProblems(program, filled);
    if (problems.length) return refuse(problems.map((problem) => problem.message));
    const application = SignupSubmission.parse(filled);
    await createAffiliate(program, application, request, response, next, async (captured) => {
      if (captured.status === 201) {
        const { status } = JSON.parse(captured.body.toString('utf8')) as { status: 'PENDING' | 'ACTIVE' };
        asPage(captured, 200, program, renderSignupResult(pageProgram, status));
      } else if (captured.status >= 400 && captured.status < 500) {
        const { error } = JSON.parse(captured.body.toString('utf8')) as { error: string };
        asPage(captured, captured.status, program, renderSignupForm(pageProgram, formToken(program._id), filled, [error]));
      }
    });
  }

  /** A program's own form: 201 `{status}`, or a 400 listing every problem in `errors`. */
  async function submitJson(program: SignupProgram, request: Request, response: Response, next: (error?: unknown) => void): Promise<void> {
    const body = request.body as unknown;
    const parsed = SignupSubmission.safeParse(body);
    const problems = parsed.success
      ? applicationProblems(program, parsed.data)
      : applicationProblems(program, filledFormOf(isRecord(body) ? body : {}), body);
    if (problems.length || !parsed.success) throw new InvalidRequest(problems as [Problem, ...Problem[]]);
    await createAffiliate(program, parsed.data, request, response, next, async (captured) => {
      if (captured.status !== 201) return;
      const { status } = JSON.parse(captured.body.toString('utf8')) as { status: 'PENDING' | 'ACTIVE' };
      captured.body = Buffer.from(JSON.stringify({ status }));
      captured.headers['content-type'] = 'application/json; charset=utf-8';
    });
  }

  /** The affiliate service creates the affiliate, its first link and affiliate.created; its answer is turned into this route's. */
  function createAffiliate(
    program: SignupProgram,
    application: SignupSubmission,
    request: Request,
    response: Response,
    next: (error?: unknown) => void,
    capture: (captured: CapturedResponse) => Promise<void>,
  ): Promise<void> {
    const body: SignupAffiliateBody = {
      firstName: application.firstName,
      lastName: application.lastName,
      email: application.email,
      signupAnswers: signupAnswersOf(program.signup.questions, application.answers),
      // Read from the program here, not left to the affiliate service, whose copy of the settings follows program.updated a moment later.
      status: program.requireApproval ? 'PENDING' : 'ACTIVE',
    };
    request.url = SIGNUP_UPSTREAM_PATH;
    return options.affiliate
      .forward(request, response, {
        programId: program._id,
        headers: {
          [INTERNAL_TOKEN_HEADER]: options.internalToken,
          [PROGRAM_ID_HEADER]: program._id,
          [REQUEST_ID_HEADER]: String(response.locals.requestId),
          'content-type': 'application/json',
        },
        body: Buffer.from(JSON.stringify(body)),
        capture,
      })
      .catch(next);
  }

  return router;
}

/** This gateway's origin as the browser sees it (behind a trusted proxy, its X-Forwarded-Proto and host). */
function ownOriginOf(request: Request): string {
  return `${request.protocol}://${request.get('host') ?? ''}`;
}

async function limitPerAddress(options: SignupRoutesOptions, programId: string, request: Request, response: Response): Promise<void> {
  const limiterKey = createHash('sha256')
    .update(`signup\n${programId}\n${request.ip ?? 'unknown'}`)
    .digest('base64url');
  const verdict = await options.rateLimits.consume(limiterKey, options.signupAddressLimit);
  if (!verdict.allowed) {
    response.setHeader('Retry-After', String(verdict.resetSeconds));
    throw new AppError(429, `Too many applications from this address; retry after ${verdict.resetSeconds} s`, {
      code: 'address_rate_limited',
    });
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** The form's fields (answers as `answers[<id>]`) as a submission, only the strings kept. */
function filledFormOf(fields: Record<string, unknown>): FilledForm & { answers: Record<string, string> } {
  // No prototype: a field answers[__proto__] is then one more (unknown) answer, never the object's prototype.
  const answers = Object.create(null) as Record<string, string>;
  const nested = fields.answers;
  if (isRecord(nested)) for (const [id, value] of Object.entries(nested)) if (typeof value === 'string') answers[id] = value;
  for (const [name, value] of Object.entries(fields)) {
    const id = /^answers\[(.+)\]$/.exec(name)?.[1];
    if (id !== undefined && typeof value === 'string') answers[id] = value;
  }
  return {
    ...(text(fields.firstName) !== undefined ? { firstName: text(fields.firstName) } : {}),
    ...(text(fields.lastName) !== undefined ? { lastName: text(fields.lastName) } : {}),
    ...(text(fields.email) !== undefined ? { email: text(fields.email) } : {}),
    answers,
  };
}

/** Every problem of an application at once: the person's fields (the contract's messages) and each answer against the program's questions. */
function applicationProblems(program: SignupProgram, filled: FilledForm, raw: unknown = filled): Problem[] {
  const problems: Problem[] = [];
  const parsed = SignupSubmission.safeParse(raw);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const param = issue.path.join('.') || null;
      problems.push({ param, message: param ? `${param}: ${issue.message}` : issue.message });
    }
  }
  for (const message of signupAnswerProblems(program.signup.questions, filled.answers ?? {})) {
    problems.push({ param: message.slice(0, message.indexOf(':')), message });
  }
  return problems;
}

function asPage(captured: CapturedResponse, status: number, program: ProgramDocument, html: string): Promise<void> {
  captured.status = status;
  captured.body = Buffer.from(html);
  captured.headers['content-type'] = 'text/html; charset=utf-8';
  captured.headers['content-security-policy'] = contentSecurityPolicyOf(program);
  captured.headers['x-content-type-options'] = 'nosniff';
  captured.headers['referrer-policy'] = 'same-origin';
  captured.headers['cache-control'] = 'no-store';
  return Promise.resolve();
}
