import {
  API_OPERATIONS,
  API_SCOPES,
  roleAllows,
  scopesOf,
  type ApiOperation,
  type ApiScope,
  type ProgramAuditAction,
  type SensitiveAct,
} from '@affiliate/contracts';
import { charsetOf, forbidden, jsonTextOf, notFound, REQUEST_ID_HEADER, type Logger } from '@affiliate/platform';
import type { Request, RequestHandler, Response } from 'express';
import type { ProgramAuditLog } from '../admin/program-audit-log';
import { PUBLIC_PREFIX } from '../proxy/route-table';
import { auditActorOf, callerOf, type MemberCaller } from './authenticate';
import { requireSameOriginWrite } from '../browser/same-origin-writes';

// The public operations a secret key can call, by method and path: the one table of scopes (contracts/src/openapi.ts).
const SECRET_KEY_OPERATIONS = new Map(
  API_OPERATIONS.filter((operation) => !operation.admin && !operation.browser).map((operation) => [
    `${operation.method.toUpperCase()} ${operation.path}`,
    operation,
  ]),
);

/**
 * HEAD and OPTIONS read like GET, as the rate limit counts them. The path is looked up in any case:
 * every router is case-sensitive (createRouter), but a variant such as `/payouts/Export` must still be
 * judged, marked no-store and recorded as the export it names, never pass as an unknown path.
 */
function operationOf(request: Request): ApiOperation | undefined {
  const method = request.method === 'HEAD' || request.method === 'OPTIONS' ? 'GET' : request.method;
  const path = request.path.length > 1 ? request.path.replace(/\/$/, '') : request.path;
  return SECRET_KEY_OPERATIONS.get(`${method} ${path.toLowerCase()}`);
}

/** The same judgement as the sale service's: the client prefers CSV to JSON. */
const wantsCsv = (request: Request) => request.accepts(['application/json', 'text/csv']) === 'text/csv';

function refuse(request: Request, response: Response, missing: ApiScope[]): never {
  const caller = callerOf(response);
  if (caller.credential === 'member') refuseRole(request, caller);
  const names = missing.map((scope) => `"${scope}"`).join(' and ');
  throw forbidden(
    `This API key lacks the ${names} scope${missing.length > 1 ? 's' : ''} needed for ${request.method} ${PUBLIC_PREFIX}${request.path}; create a key with ${missing.length > 1 ? 'them' : 'it'} (POST /admin/v1/programs/{id}/api-keys {"scopes": [...]})`,
    'scope_missing',
  );
}

/** A member's role may not make this request: the role and the operation named, as the console shows it. */
function refuseRole(request: Request, caller: MemberCaller): never {
  throw forbidden(`Your role ${caller.role} cannot ${request.method} ${PUBLIC_PREFIX}${request.path}`, 'role_forbidden');
}

/** What changes nothing: a session's GET and HEAD need no CSRF token, and are not a member's change in the audit record. */
const isRead = (request: Request) => request.method === 'GET' || request.method === 'HEAD';

export type ScopeOptions = { audit: ProgramAuditLog; logger: Logger };

/**
 * Scoped keys (Stripe's restricted keys): after authentication, a secret key must hold every scope
 * its operation names, or the request is refused 403 before anything reaches a service. A path no
 * operation has is open to full keys only. A sensitive act (a secret revealed, bank details
 * exported or changed, a payout's status changed) is answered `no-store` and recorded in the program's audit
 * record, refused attempts included; an act that depends on the body is judged by `sensitiveBody`.
 * A team member's console session is judged by its role instead (judgeMember).
 */
export function requireScopes(options: ScopeOptions): RequestHandler {
  return (request, response, next) => {
    const caller = callerOf(response);
    if (caller.credential === 'publishable') return next();
    const operation = operationOf(request);
    // Every change a member makes or tries is recorded, refusals included (a sensitive act below names it more precisely).
    if (caller.credential === 'member' && !isRead(request)) recordWhenAnswered(options, request, response, 'member.change');
    const act = operation?.sensitive;
    if (act) {
      response.setHeader('Cache-Control', 'no-store');
      response.locals.sensitiveAct = act;
      if (!act.when || (act.when === 'csv' && wantsCsv(request))) recordWhenAnswered(options, request, response, act.action);
    }
    if (caller.credential === 'member') return judgeMember(request, caller, operation, next);
    const missing = (operation ? scopesOf(operation) : [...API_SCOPES]).filter((scope) => !caller.scopes.includes(scope));
    if (missing.length > 0) refuse(request, response, missing);
    next();
  };
}

/**
 * A team member's request (issue 32): a write must come from the console's own page with the session's
 * CSRF token (a forged cross-site request is refused before its role is even looked at); then the role
 * decides, by the same rule the console hides its buttons by (roleAllows). A member reaches only what
 * the document names: a method and path no operation has is answered 404 here, for every role, and
 * never reaches a service (a full API key's is forwarded, as it always was).
 */
function judgeMember(request: Request, caller: MemberCaller, operation: ApiOperation | undefined, next: () => void): void {
  if (!isRead(request)) requireSameOriginWrite(request, caller.csrfToken, 'console');
  if (!operation) throw notFound(`No route for ${request.method} ${PUBLIC_PREFIX}${request.path}`, 'route_missing');
  if (!roleAllows(caller.role, { operationId: operation.operationId, scopes: scopesOf(operation) })) refuseRole(request, caller);
  next();
}

/** Whether the body does the act: `rotateSecret: true`, or `payoutDetails` given (set, or cleared with null). */
const BODY_ACTS: Record<'rotateSecret' | 'payoutDetails', (value: unknown) => boolean> = {
  rotateSecret: (value) => value === true,
  payoutDetails: (value) => value !== undefined,
};

/** A body the gateway cannot read as the service will: judged as doing the act (fail closed). */
const UNREADABLE = Symbol('unreadable body');

/**
 * After the body is read: an act that only the body reveals, checked and recorded like the others. A
 * non-empty body the gateway cannot read exactly as the service will (a byte-order mark, a charset other
 * than UTF-8, invalid bytes, not JSON) counts as doing the act: it needs the act's scope and is recorded.
 * The service refuses such a body anyway (jsonTextOf), so a key holding the scope gets that 400 or 415.
 */
export function sensitiveBody(options: ScopeOptions): RequestHandler {
  return (request, response, next) => {
    const act = response.locals.sensitiveAct as SensitiveAct | undefined;
    if (!act || act.when === undefined || act.when === 'csv') return next();
    const value = bodyField(request, act.when);
    if (value !== UNREADABLE && !BODY_ACTS[act.when](value)) return next();
    recordWhenAnswered(options, request, response, act.action);
    if (!callerOf(response).scopes.includes(act.scope)) refuse(request, response, [act.scope]);
    next();
  };
}

/** The field as the service will read it, by the service's own decoding (jsonTextOf); UNREADABLE when that reading fails. */
function bodyField(request: Request, field: string): unknown {
  const body: unknown = request.body;
  if (!Buffer.isBuffer(body) || body.length === 0) return undefined;
  try {
    const parsed: unknown = JSON.parse(jsonTextOf(body, charsetOf(request.header('content-type'))));
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>)[field] : undefined;
  } catch {
    return UNREADABLE;
  }
}

/**
 * Recorded once the answer is done: on 'finish', or on 'close' when the client dropped the connection
 * first (a CSV of bank details read halfway is still bank details exported), then marked `aborted`.
 * One record per request: a later, more precise action (a member's change that turns out to be a
 * sensitive act) replaces the earlier one.
 */
function recordWhenAnswered(options: ScopeOptions, request: Request, response: Response, action: ProgramAuditAction): void {
  const pending = response.locals.auditAction !== undefined;
  response.locals.auditAction = action;
  if (pending) return;
  const caller = callerOf(response);
  const operation = `${request.method} ${PUBLIC_PREFIX}${request.path}`;
  let recorded = false;
  const record = () => {
    if (recorded) return;
    recorded = true;
    const recordedAction = response.locals.auditAction as ProgramAuditAction;
    options.audit
      .record(caller.programId, {
        actor: auditActorOf(caller),
        action: recordedAction,
        operation,
        status: response.statusCode,
        aborted: !response.writableFinished,
        requestId: String(response.locals.requestId ?? request.header(REQUEST_ID_HEADER) ?? '') || null,
      })
      .catch((error: unknown) =>
        options.logger.error({ err: error, action: recordedAction }, "could not write the program's audit record"),
      );
  };
  response.once('finish', record);
  response.once('close', record);
}
