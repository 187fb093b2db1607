import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import * as affiliate from './affiliate';
import * as browser from './browser';
import * as commission from './commission';
import { ErrorBody, isKeptForReplay, ListQuery, NUMBERED_ERROR_OPERATIONS, NumberedErrorBody } from './common';
import * as coupon from './coupon';
import * as integration from './integration';
import { OPERATION_DESCRIPTIONS, type OperationId } from './operation-descriptions';
import { addOperationExamples } from './operation-examples';
import { examplePayloadOf, payloadComponentName, payloadSchemaOf } from './event-catalogue';
import * as eventApi from './event-api';
import { PUBLIC_EVENT_TYPES, WebhookPayload } from './events';
import * as portal from './portal';
import * as program from './program';
import type { ApiScope, ProgramAuditAction } from './program';
import * as referral from './referral';
import * as review from './review';
import * as sale from './sale';
import * as signup from './signup';
import * as summary from './summary';
import * as team from './team';
import * as webhook from './webhook';
import type { ZodTypeAny } from 'zod';
import { z } from './zod';

type Operation = {
  method: RouteConfig['method'];
  path: string;
  /** Names the method a generated client gets (createCoupon, getCoupons, ...); its description is in operation-descriptions.ts. */
  operationId: OperationId;
  summary: string;
  tag: string;
  body?: ZodTypeAny;
  /** The body may be left out (every field of it is optional). */
  bodyOptional?: boolean;
  query?: z.AnyZodObject;
  response: ZodTypeAny;
  admin?: boolean;
  /** Called from web pages with a publishable key (CORS, allowed origins only). */
  browser?: boolean;
  /** Also answers text/csv (the list with `Accept: text/csv`, or an export). */
  csv?: 'also' | 'only';
  /**
   * What a secret API key needs for this operation, every one of them (scoped keys, like Stripe's
   * restricted keys); empty for admin and browser routes, which take other credentials.
   */
  scopes: ApiScope[];
  /** An act the program's audit record keeps, with the scope it needs (always, or only `when` the request does it). */
  sensitive?: SensitiveAct;
  /**
   * A team operation of the console (issue 32): never an API key's (403 `team_session_required`).
   * `member`: any member's session; `owner`: an OWNER's session only (other roles 403
   * `role_forbidden`); `anyone`: no session, the request carries its own credential (sign-in, an invite's token).
   */
  team?: 'anyone' | 'member' | 'owner';
};

/**
 * Revealing a webhook signing secret, exporting or changing bank details and changing a payout's
 * status: each needs its scope, leaves a record the program reads at GET /api/v1/audit-records, and
 * is answered with `Cache-Control: no-store`. `when`: only with `Accept: text/csv` (the CSV carries
 * full IBANs), only when the body has `rotateSecret: true` (the answer carries the new secret), or
 * only when the body has `payoutDetails` (an affiliate's bank details set or cleared: where the
 * money goes).
 */
export type SensitiveAct = { action: ProgramAuditAction; scope: ApiScope; when?: 'csv' | 'rotateSecret' | 'payoutDetails' };

/** The scopes a request to this operation needs: its own, plus the sensitive act's when the act always happens. */
export function scopesOf(operation: Operation): ApiScope[] {
  const scopes = new Set(operation.scopes);
  if (operation.sensitive && !operation.sensitive.when) scopes.add(operation.sensitive.scope);
  return [...scopes];
}

export type ApiOperation = Operation;

const oneOrMany = (schema: ZodTypeAny) => z.union([schema, z.array(schema)]);
const DELETED = z.object({
  id: z.string().openapi({ description: 'The id of the object deleted' }),
  deleted: z.literal(true).openapi({ description: 'Always true' }),
});
const REVOKED = z.object({
  id: z.string().openapi({ description: 'The id of the key revoked' }),
  revoked: z.literal(true).openapi({ description: 'Always true: it no longer works' }),
});

/** Every public operation; the document and the gateway's route table both read from here. */
export const API_OPERATIONS: Operation[] = [
  {
    method: 'post',
    path: '/coupons',
    operationId: 'createCoupon',
    scopes: ['write'],
    tag: 'Coupons',
    summary: 'Create a coupon',
    body: coupon.CreateCouponBody,
    response: coupon.Coupon,
  },
  {
    method: 'get',
    path: '/coupons',
    operationId: 'getCoupons',
    scopes: ['read'],
    tag: 'Coupons',
    summary: 'Look up coupons',
    query: coupon.CouponQuery,
    response: oneOrMany(coupon.Coupon),
  },
  {
    method: 'put',
    path: '/coupons',
    operationId: 'updateCoupon',
    scopes: ['write'],
    tag: 'Coupons',
    summary: 'Update a coupon',
    body: coupon.UpdateCouponBody,
    response: coupon.Coupon,
  },
  {
    method: 'delete',
    path: '/coupons',
    operationId: 'deleteCoupon',
    scopes: ['write'],
    tag: 'Coupons',
    summary: 'Delete a coupon and its codes',
    body: coupon.DeleteCouponBody,
    response: coupon.DeleteCouponResponse,
  },
  {
    method: 'post',
    path: '/promotional-codes',
    operationId: 'createPromotionalCode',
    scopes: ['write'],
    tag: 'Promotional codes',
    summary: 'Create a code',
    body: coupon.CreatePromotionalCodeBody,
    response: coupon.PromotionalCode,
  },
  {
    method: 'post',
    path: '/promotional-codes/bulk',
    operationId: 'issuePromotionalCodesInBulk',
    scopes: ['write'],
    tag: 'Promotional codes',
    summary:
      'Issue a generated code of one coupon to each affiliate named (at most 100), or to every ACTIVE affiliate a page at a time (allActive, startingAfter); an affiliate never gets two codes of one coupon; one promocode.created per code',
    body: coupon.BulkIssueBody,
    response: coupon.BulkIssueResult,
  },
  {
    method: 'get',
    path: '/promotional-codes',
    operationId: 'getPromotionalCodes',
    scopes: ['read'],
    tag: 'Promotional codes',
    summary: 'Look up codes',
    query: coupon.PromotionalCodeQuery,
    response: oneOrMany(coupon.PromotionalCode),
  },
  {
    method: 'put',
    path: '/promotional-codes',
    operationId: 'updatePromotionalCode',
    scopes: ['write'],
    tag: 'Promotional codes',
    summary: 'Update a code',
    body: coupon.UpdatePromotionalCodeBody,
    response: coupon.PromotionalCode,
  },
  {
    method: 'delete',
    path: '/promotional-codes',
    operationId: 'deletePromotionalCode',
    scopes: ['write'],
    tag: 'Promotional codes',
    summary: 'Delete a code',
    body: coupon.DeletePromotionalCodeBody,
    response: DELETED,
  },
  {
    method: 'post',
    path: '/affiliates',
    operationId: 'createAffiliate',
    scopes: ['write'],
    tag: 'Affiliates',
    summary: 'Create an affiliate',
    body: affiliate.CreateAffiliateBody,
    response: affiliate.Affiliate,
  },
  {
    method: 'get',
    path: '/affiliates',
    operationId: 'getAffiliates',
    scopes: ['read'],
    tag: 'Affiliates',
    summary: 'Look up affiliates (null when nothing matches)',
    query: affiliate.AffiliateQuery,
    response: oneOrMany(affiliate.Affiliate).nullable(),
    csv: 'also',
  },
  {
    method: 'put',
    path: '/affiliates',
    operationId: 'updateAffiliate',
    scopes: ['write'],
    sensitive: { action: 'bank_details.changed', scope: 'finance', when: 'payoutDetails' },
    tag: 'Affiliates',
    summary: 'Update an affiliate',
    body: affiliate.UpdateAffiliateBody,
    response: affiliate.Affiliate,
  },
  {
    method: 'delete',
    path: '/affiliates',
    operationId: 'deleteAffiliate',
    scopes: ['write'],
    tag: 'Affiliates',
    summary: 'Delete an affiliate',
    body: affiliate.DeleteAffiliateBody,
    response: DELETED,
  },
  {
    method: 'post',
    path: '/links',
    operationId: 'createLink',
    scopes: ['write'],
    tag: 'Links',
    summary: 'Add a link',
    body: affiliate.CreateLinkBody,
    response: affiliate.LinkResponse,
  },
  {
    method: 'get',
    path: '/links',
    operationId: 'getLinks',
    scopes: ['read'],
    tag: 'Links',
    summary: 'Look up links',
    query: affiliate.LinkQuery,
    response: z.array(affiliate.LinkResponse),
  },
  {
    method: 'put',
    path: '/links',
    operationId: 'renameLink',
    scopes: ['write'],
    tag: 'Links',
    summary: 'Rename a link',
    body: affiliate.RenameLinkBody,
    response: affiliate.LinkResponse,
  },
  {
    method: 'delete',
    path: '/links',
    operationId: 'deleteLink',
    scopes: ['write'],
    tag: 'Links',
    summary: 'Delete a link',
    body: affiliate.DeleteLinkBody,
    response: DELETED,
  },
  {
    method: 'post',
    path: '/clicks',
    operationId: 'recordClick',
    scopes: ['write'],
    tag: 'Links',
    summary: 'Record a click',
    body: affiliate.RecordClickBody,
    response: affiliate.Click,
  },
  {
    method: 'post',
    path: '/referrals',
    operationId: 'createReferral',
    scopes: ['write'],
    tag: 'Referrals',
    summary: 'Create a referral',
    body: referral.CreateReferralBody,
    response: referral.Referral,
  },
  {
    method: 'get',
    path: '/referrals',
    operationId: 'getReferrals',
    scopes: ['read'],
    tag: 'Referrals',
    summary: 'Look up referrals',
    query: referral.ReferralQuery,
    response: oneOrMany(referral.Referral),
    csv: 'also',
  },
  {
    method: 'put',
    path: '/referrals',
    operationId: 'updateReferral',
    scopes: ['write'],
    tag: 'Referrals',
    summary: 'Update a referral',
    body: referral.UpdateReferralBody,
    response: z.object({
      message: z.string().openapi({ description: 'What was done: Referral updated successfully' }),
      referral: referral.Referral,
    }),
  },
  {
    method: 'delete',
    path: '/referrals',
    operationId: 'deleteReferral',
    scopes: ['write'],
    tag: 'Referrals',
    summary: 'Delete a referral',
    body: referral.DeleteReferralBody,
    response: DELETED,
  },
  {
    method: 'post',
    path: '/sales',
    operationId: 'createSale',
    scopes: ['write'],
    tag: 'Sales',
    summary: 'Attribute a payment',
    body: sale.CreateSaleBody,
    response: sale.Sale,
  },
  {
    method: 'get',
    path: '/sales',
    operationId: 'getSales',
    scopes: ['read'],
    tag: 'Sales',
    summary: 'Look up sales',
    query: sale.SaleQuery,
    response: oneOrMany(sale.Sale),
    csv: 'also',
  },
  {
    method: 'put',
    path: '/sales',
    operationId: 'updateSale',
    scopes: ['write'],
    tag: 'Sales',
    summary: 'Recalculate or mark paid',
    body: sale.UpdateSaleBody,
    response: sale.Sale,
  },
  {
    method: 'delete',
    path: '/sales',
    operationId: 'deleteSale',
    scopes: ['write'],
    tag: 'Sales',
    summary: 'Reverse a sale',
    body: sale.DeleteSaleBody,
    response: DELETED,
  },
  {
    method: 'post',
    path: '/commission-plans',
    operationId: 'createCommissionPlan',
    scopes: ['write'],
    tag: 'Commissions',
    summary: 'Create a commission plan',
    body: commission.CreateCommissionPlanBody,
    response: commission.CommissionPlan,
  },
  {
    method: 'get',
    path: '/commission-plans',
    operationId: 'getCommissionPlans',
    scopes: ['read'],
    tag: 'Commissions',
    summary: 'Look up commission plans',
    query: commission.CommissionPlanQuery,
    response: oneOrMany(commission.CommissionPlan),
  },
  {
    method: 'put',
    path: '/commission-plans',
    operationId: 'updateCommissionPlan',
    scopes: ['write'],
    tag: 'Commissions',
    summary: 'Change a plan (commissions already earned are not recalculated)',
    body: commission.UpdateCommissionPlanBody,
    response: commission.CommissionPlan,
  },
  {
    method: 'delete',
    path: '/commission-plans',
    operationId: 'deleteCommissionPlan',
    scopes: ['write'],
    tag: 'Commissions',
    summary: 'Delete a plan no affiliate is on',
    body: commission.DeleteCommissionPlanBody,
    response: DELETED,
  },
  {
    method: 'post',
    path: '/payouts',
    operationId: 'createPayouts',
    scopes: ['finance'],
    tag: 'Commissions',
    summary:
      'Gather due commissions into one payout per affiliate and currency (a run starts no payout after 5 s: call again until it answers [])',
    body: commission.CreatePayoutsBody,
    response: z.array(commission.Payout),
  },
  {
    method: 'get',
    path: '/payouts',
    operationId: 'getPayouts',
    scopes: ['finance'],
    sensitive: { action: 'bank_details.exported', scope: 'finance', when: 'csv' },
    tag: 'Commissions',
    summary: 'Look up payouts (CSV with Accept: text/csv)',
    query: commission.PayoutQuery,
    response: oneOrMany(commission.Payout),
    csv: 'also',
  },
  {
    method: 'put',
    path: '/payouts',
    operationId: 'updatePayout',
    scopes: ['finance'],
    sensitive: { action: 'payout.status_changed', scope: 'finance' },
    tag: 'Commissions',
    summary: 'Mark a payout PAID or FAILED',
    body: commission.UpdatePayoutBody,
    response: commission.Payout,
  },
  {
    method: 'get',
    path: '/payouts/export',
    operationId: 'exportPayout',
    scopes: ['finance'],
    sensitive: { action: 'bank_details.exported', scope: 'finance' },
    tag: 'Commissions',
    summary: 'A payout as CSV for a mass-payout tool',
    query: commission.PayoutExportQuery,
    response: z.string(),
    csv: 'only',
  },
  {
    method: 'get',
    path: '/commissions',
    operationId: 'getCommissions',
    scopes: ['read'],
    tag: 'Fraud review',
    summary:
      "Commissions across sales, each with its sale's risk signals: the review queue is status=HELD (pages by sale: startingAfter is the saleId of the last one). A reversed sale's commissions are listed too (VOID, or PAID with its negative adjustment)",
    query: review.CommissionQuery,
    response: z.array(review.CommissionListItem),
    csv: 'also',
  },
  {
    method: 'post',
    path: '/commissions/release',
    operationId: 'releaseCommission',
    scopes: ['write'],
    tag: 'Fraud review',
    summary:
      'Release a HELD commission: PENDING or DUE again by its date (sale.updated); the decision records when, which key and the note',
    body: review.ReleaseCommissionBody,
    response: sale.Sale,
  },
  {
    method: 'post',
    path: '/commissions/void',
    operationId: 'voidCommission',
    scopes: ['write'],
    tag: 'Fraud review',
    summary: 'Void a HELD, PENDING or DUE commission in no payout (sale.updated); the decision records when, which key and the reason',
    body: review.VoidCommissionBody,
    response: sale.Sale,
  },
  {
    method: 'get',
    path: '/affiliates/statement',
    operationId: 'getAffiliateStatement',
    scopes: ['read'],
    tag: 'Fraud review',
    summary:
      "An affiliate's statement in one currency: opening balance, every entry (EARNED, HELD, RELEASED, VOIDED, ADJUSTED, PAID_OUT) with its sale or payout, closing balance (CSV with format=csv or Accept: text/csv)",
    query: review.StatementQuery,
    response: review.Statement,
    csv: 'also',
  },
  {
    method: 'get',
    path: '/reports/affiliates',
    operationId: 'getAffiliateReport',
    scopes: ['read'],
    tag: 'Commissions',
    summary: 'Per affiliate: clicks, referrals, sales, revenue and commission in a period (CSV with Accept: text/csv)',
    query: commission.ReportQuery,
    response: z.array(commission.AffiliateReportRow),
    csv: 'also',
  },
  {
    method: 'get',
    path: '/reports/summary',
    operationId: 'getProgramSummary',
    scopes: ['read'],
    tag: 'Commissions',
    summary:
      'The program at a glance for a period (default: the last 30 days): affiliates by status, referrals, and sales, revenue and commission per currency with a daily series',
    query: summary.SummaryQuery,
    response: summary.ProgramSummary,
  },
  {
    method: 'post',
    path: '/webhook-endpoints',
    operationId: 'createWebhookEndpoint',
    scopes: ['write', 'webhook_secrets'],
    sensitive: { action: 'webhook_secret.revealed', scope: 'webhook_secrets' },
    tag: 'Webhooks',
    summary: 'Create a webhook endpoint',
    body: webhook.CreateWebhookEndpointBody,
    response: webhook.WebhookEndpoint,
  },
  {
    method: 'get',
    path: '/webhook-endpoints',
    operationId: 'getWebhookEndpoints',
    scopes: ['read'],
    tag: 'Webhooks',
    summary: 'Look up webhook endpoints',
    query: webhook.WebhookEndpointQuery,
    response: oneOrMany(webhook.WebhookEndpoint),
  },
  {
    method: 'put',
    path: '/webhook-endpoints',
    operationId: 'updateWebhookEndpoint',
    scopes: ['write'],
    sensitive: { action: 'webhook_secret.revealed', scope: 'webhook_secrets', when: 'rotateSecret' },
    tag: 'Webhooks',
    summary: 'Update a webhook endpoint',
    body: webhook.UpdateWebhookEndpointBody,
    response: webhook.WebhookEndpoint,
  },
  {
    method: 'delete',
    path: '/webhook-endpoints',
    operationId: 'deleteWebhookEndpoint',
    scopes: ['write'],
    tag: 'Webhooks',
    summary: 'Delete a webhook endpoint',
    body: webhook.DeleteWebhookEndpointBody,
    response: DELETED,
  },
  {
    method: 'get',
    path: '/webhook-endpoints/secret',
    operationId: 'getWebhookEndpointSecret',
    scopes: ['webhook_secrets'],
    sensitive: { action: 'webhook_secret.revealed', scope: 'webhook_secrets' },
    tag: 'Webhooks',
    summary: "Reveal an endpoint's signing secret",
    query: webhook.WebhookSecretQuery,
    response: webhook.WebhookSecret,
  },
  {
    method: 'get',
    path: '/webhook-deliveries',
    operationId: 'getWebhookDeliveries',
    scopes: ['read'],
    tag: 'Webhooks',
    summary: 'Delivery log',
    query: webhook.WebhookDeliveryQuery,
    response: z.array(webhook.WebhookDelivery),
  },
  {
    method: 'post',
    path: '/webhook-deliveries/retry',
    operationId: 'retryWebhookDelivery',
    scopes: ['write'],
    tag: 'Webhooks',
    summary: 'Re-send a delivery now',
    body: webhook.RetryDeliveryBody,
    response: webhook.WebhookDelivery,
  },
  {
    method: 'post',
    path: '/webhook-endpoints/test',
    operationId: 'testWebhookEndpoint',
    scopes: ['write'],
    tag: 'Webhooks',
    summary: 'Send a signed ping to an endpoint',
    body: webhook.TestWebhookEndpointBody,
    response: webhook.WebhookTestResult,
  },
  {
    method: 'post',
    path: '/webhook-deliveries/recover',
    operationId: 'recoverWebhookDeliveries',
    scopes: ['write'],
    tag: 'Webhooks',
    summary: 'Re-send every failed delivery of an endpoint in a time window',
    body: webhook.RecoverDeliveriesBody,
    response: z.object({ recovered: z.number().int().openapi({ description: 'Failed deliveries scheduled to be sent again' }) }),
  },
  {
    method: 'get',
    path: '/events',
    operationId: 'getEvents',
    scopes: ['read'],
    tag: 'Webhooks',
    summary:
      'The public events of the retention period (30 days by default), newest first; an event id is the webhook-id of its deliveries',
    query: eventApi.EventQuery,
    response: oneOrMany(WebhookPayload),
  },
  {
    method: 'post',
    path: '/webhook-deliveries/replay',
    operationId: 'replayWebhookDeliveries',
    scopes: ['write'],
    tag: 'Webhooks',
    summary:
      'Send the stored events of a time window to an endpoint again, with their original ids (skipping those it received unless includeSucceeded)',
    body: eventApi.ReplayDeliveriesBody,
    response: eventApi.ReplayResult,
  },
  {
    method: 'post',
    path: '/webhook-endpoints/verify',
    operationId: 'verifyWebhook',
    scopes: ['read'],
    tag: 'Webhooks',
    summary: "Check a received webhook against the endpoint's secret and say why it fails, without revealing the secret",
    body: eventApi.VerifyWebhookBody,
    response: eventApi.WebhookVerification,
  },
  {
    method: 'get',
    path: '/event-types',
    operationId: 'getEventTypes',
    scopes: ['read'],
    tag: 'Webhooks',
    summary: 'Every public event type, with the JSON Schema and an example of each payload',
    response: z.array(webhook.EventTypeDescription),
  },
  {
    method: 'get',
    path: '/audit-records',
    operationId: 'getAuditRecords',
    scopes: ['read'],
    tag: 'Program',
    summary:
      "This program's audit record, newest first: each secret revealed, bank details exported or changed and payout status changed, with the API key that did it (refusals included), or, for bank details changed in the affiliate portal, the portal session, its affiliate and the key that made the session",
    query: ListQuery,
    response: z.array(program.ProgramAuditRecord),
  },
  {
    method: 'get',
    path: '/program',
    operationId: 'getOwnProgram',
    scopes: ['read'],
    tag: 'Program',
    summary: 'The settings of the program of this key',
    response: program.Program,
  },
  {
    method: 'put',
    path: '/program',
    operationId: 'updateOwnProgram',
    scopes: ['write'],
    tag: 'Program',
    summary:
      'Change the settings of the program of this key: name, URLs, approval, attribution, click deduplication, allowed origins (not the rate limit or API access)',
    body: program.ProgramSettingsBody,
    response: program.Program,
  },
  {
    method: 'get',
    path: '/publishable-keys',
    operationId: 'getPublishableKeys',
    scopes: ['read'],
    tag: 'Program',
    summary: 'The publishable keys of this program, for the tracking script',
    response: z.array(program.PublishableKey),
  },
  {
    method: 'post',
    path: '/publishable-keys',
    operationId: 'createPublishableKey',
    scopes: ['write'],
    tag: 'Program',
    summary: 'Create a publishable key (pk_…), safe to put in a web page',
    response: program.PublishableKey,
  },
  {
    method: 'delete',
    path: '/publishable-keys',
    operationId: 'revokePublishableKey',
    scopes: ['write'],
    tag: 'Program',
    summary: 'Revoke a publishable key',
    body: program.RevokePublishableKeyBody,
    response: REVOKED,
  },
  {
    method: 'post',
    path: '/affiliate-portal-sessions',
    operationId: 'createAffiliatePortalSession',
    scopes: ['write', 'finance'],
    tag: 'Affiliate portal',
    summary:
      "A single-use link (10 minutes) into the affiliate portal of one ACTIVE affiliate; opening it gives that browser a 12-hour session of this affiliate only. Needs the finance scope as well as write: the portal shows the affiliate's payouts and changes its bank details (each change is in the audit record, its actor the session and the key that made it)",
    body: portal.CreatePortalSessionBody,
    response: portal.PortalSession,
  },
  {
    method: 'delete',
    path: '/affiliate-portal-sessions',
    operationId: 'revokeAffiliatePortalSessions',
    scopes: ['write'],
    tag: 'Affiliate portal',
    summary: 'Revoke one portal session, or every session of an affiliate: its link stops opening and its cookie stops working at once',
    body: portal.RevokePortalSessionsBody,
    response: portal.RevokedPortalSessions,
  },
  {
    method: 'post',
    path: '/browser/clicks',
    operationId: 'recordBrowserClick',
    scopes: [],
    tag: 'Browser',
    browser: true,
    summary: 'Record a click from a web page (publishable key, allowed origins only; the address and user agent come from the request)',
    body: browser.BrowserClickBody,
    response: browser.BrowserClick,
  },
  {
    method: 'post',
    path: '/browser/referrals',
    operationId: 'createBrowserReferral',
    scopes: [],
    tag: 'Browser',
    browser: true,
    summary: 'Create a referral from a web page, from a click or a visitor (publishable key, allowed origins only)',
    body: browser.BrowserReferralBody,
    response: browser.BrowserReferral,
  },
  {
    method: 'get',
    path: '/integrations/stripe',
    operationId: 'getStripeIntegration',
    scopes: ['read'],
    tag: 'Integrations',
    summary: 'Whether Stripe is connected, the last 4 characters of its webhook secret, and the webhook URL to give Stripe',
    response: integration.StripeIntegration,
  },
  {
    method: 'put',
    path: '/integrations/stripe',
    operationId: 'configureStripeIntegration',
    scopes: ['write'],
    tag: 'Integrations',
    summary: "Store the signing secret of the program's Stripe webhook endpoint (never returned)",
    body: integration.ConfigureStripeBody,
    response: integration.StripeIntegration,
  },
  {
    method: 'post',
    path: '/team/session',
    operationId: 'signIn',
    scopes: [],
    team: 'anyone',
    tag: 'Team',
    summary: 'Sign in to the console with an email and a password (and the TOTP code when on): the session cookie',
    body: team.SignInBody,
    response: team.TeamSession,
  },
  {
    method: 'get',
    path: '/team/session',
    operationId: 'getTeamSession',
    scopes: [],
    team: 'member',
    tag: 'Team',
    summary: 'The signed-in member, the program, the CSRF token and what the role may do',
    response: team.TeamSession,
  },
  {
    method: 'delete',
    path: '/team/session',
    operationId: 'signOut',
    scopes: [],
    team: 'member',
    tag: 'Team',
    summary: 'Sign out: the session stops working at once and its cookie is cleared',
    response: z.object({ signedOut: z.literal(true).openapi({ description: 'Always true' }) }),
  },
  {
    method: 'post',
    path: '/team/invites/accept',
    operationId: 'acceptTeamInvite',
    scopes: [],
    team: 'anyone',
    tag: 'Team',
    summary:
      "Accept an invite: choose a password, become a member with the invite's role and get a session (the link works once, for 72 hours)",
    body: team.AcceptInviteBody,
    response: team.TeamSession,
  },
  {
    method: 'get',
    path: '/team/members',
    operationId: 'getTeamMembers',
    scopes: [],
    team: 'member',
    tag: 'Team',
    summary: "The program's members and pending invites (every role may read them)",
    response: team.TeamMembers,
  },
  {
    method: 'post',
    path: '/team/members',
    operationId: 'inviteTeamMember',
    scopes: [],
    team: 'owner',
    tag: 'Team',
    summary: 'Invite a person with a role: a single-use link (72 hours) to give them',
    body: team.InviteMemberBody,
    response: team.TeamInviteCreated,
  },
  {
    method: 'put',
    path: '/team/members',
    operationId: 'changeTeamMemberRole',
    scopes: [],
    team: 'owner',
    tag: 'Team',
    summary: "Change a member's role (their sessions end; the last OWNER keeps the role)",
    body: team.ChangeMemberRoleBody,
    response: team.TeamMember,
  },
  {
    method: 'delete',
    path: '/team/members',
    operationId: 'removeTeamMember',
    scopes: [],
    team: 'owner',
    tag: 'Team',
    summary: 'Remove a member, or withdraw an invite (their sessions end; the last OWNER stays)',
    body: team.RemoveMemberBody,
    response: DELETED,
  },
  {
    method: 'post',
    path: '/team/totp',
    operationId: 'startTotpEnrolment',
    scopes: [],
    team: 'member',
    tag: 'Team',
    summary: "Start turning on the second factor: a new secret for the member's authenticator app",
    response: team.TotpEnrolment,
  },
  {
    method: 'put',
    path: '/team/totp',
    operationId: 'confirmTotp',
    scopes: [],
    team: 'member',
    tag: 'Team',
    summary: 'Confirm the second factor with a code of the app: from now on sign-in asks for one',
    body: team.TotpCodeBody,
    response: team.TotpStatus,
  },
  {
    method: 'delete',
    path: '/team/totp',
    operationId: 'disableTotp',
    scopes: [],
    team: 'member',
    tag: 'Team',
    summary: 'Turn the second factor off, with a current code of the app',
    body: team.TotpCodeBody,
    response: team.TotpStatus,
  },
  {
    method: 'get',
    path: '/api-keys',
    operationId: 'getOwnApiKeys',
    scopes: [],
    team: 'owner',
    tag: 'Team',
    summary: "The program's secret API keys, without their secrets (OWNER)",
    response: z.array(program.ApiKeySummary),
  },
  {
    method: 'post',
    path: '/api-keys',
    operationId: 'createOwnApiKey',
    scopes: [],
    team: 'owner',
    tag: 'Team',
    summary: 'Create a secret API key for an integration (shown once), with every scope or the ones given (OWNER)',
    body: program.CreateApiKeyBody,
    bodyOptional: true,
    response: program.CreatedApiKey,
  },
  {
    method: 'delete',
    path: '/api-keys',
    operationId: 'revokeOwnApiKey',
    scopes: [],
    team: 'owner',
    tag: 'Team',
    summary: 'Revoke a secret API key: it stops working within seconds (OWNER)',
    body: team.RevokeApiKeyBody,
    response: REVOKED,
  },
  {
    method: 'post',
    path: '/programs',
    operationId: 'createProgram',
    scopes: [],
    tag: 'Admin',
    summary: 'Create a program',
    body: program.CreateProgramBody,
    response: program.Program,
    admin: true,
  },
  {
    method: 'get',
    path: '/programs',
    operationId: 'listPrograms',
    scopes: [],
    tag: 'Admin',
    summary: 'List programs, newest first',
    query: ListQuery,
    response: z.array(program.Program),
    admin: true,
  },
  {
    method: 'get',
    path: '/programs/{id}',
    operationId: 'getProgram',
    scopes: [],
    tag: 'Admin',
    summary: 'Read a program',
    response: program.Program,
    admin: true,
  },
  {
    method: 'put',
    path: '/programs/{id}',
    operationId: 'updateProgram',
    scopes: [],
    tag: 'Admin',
    summary: 'Update a program',
    body: program.UpdateProgramBody,
    response: program.Program,
    admin: true,
  },
  {
    method: 'delete',
    path: '/programs/{id}',
    operationId: 'deleteProgram',
    scopes: [],
    tag: 'Admin',
    summary: 'Delete a program',
    response: DELETED,
    admin: true,
  },
  {
    method: 'post',
    path: '/programs/{id}/api-keys',
    operationId: 'createApiKey',
    scopes: [],
    tag: 'Admin',
    summary: 'Create an API key (shown once), with every scope or the ones given',
    body: program.CreateApiKeyBody,
    bodyOptional: true,
    response: program.CreatedApiKey,
    admin: true,
  },
  {
    method: 'get',
    path: '/programs/{id}/api-keys',
    operationId: 'listApiKeys',
    scopes: [],
    tag: 'Admin',
    summary: 'List the API keys of a program (without secrets)',
    response: z.array(program.ApiKeySummary),
    admin: true,
  },
  {
    method: 'delete',
    path: '/api-keys/{id}',
    operationId: 'revokeApiKey',
    scopes: [],
    tag: 'Admin',
    summary: 'Revoke an API key',
    response: REVOKED,
    admin: true,
  },
  {
    method: 'post',
    path: '/programs/{id}/members',
    operationId: 'inviteProgramMember',
    scopes: [],
    tag: 'Admin',
    summary: "Invite a member of a program's team, such as its first OWNER: a single-use link (72 hours) to give them",
    body: team.InviteMemberBody,
    response: team.TeamInviteCreated,
    admin: true,
  },
  {
    method: 'get',
    path: '/programs/{id}/members',
    operationId: 'listProgramMembers',
    scopes: [],
    tag: 'Admin',
    summary: "A program's team members and pending invites",
    response: team.TeamMembers,
    admin: true,
  },
  {
    method: 'post',
    path: '/programs/{id}/publishable-keys',
    operationId: 'adminCreatePublishableKey',
    scopes: [],
    tag: 'Admin',
    summary: 'Create a publishable key (pk_…) for a program',
    response: program.PublishableKey,
    admin: true,
  },
  {
    method: 'get',
    path: '/programs/{id}/publishable-keys',
    operationId: 'adminListPublishableKeys',
    scopes: [],
    tag: 'Admin',
    summary: 'List the publishable keys of a program',
    response: z.array(program.PublishableKey),
    admin: true,
  },
  {
    method: 'delete',
    path: '/publishable-keys/{id}',
    operationId: 'adminRevokePublishableKey',
    scopes: [],
    tag: 'Admin',
    summary: 'Revoke a publishable key',
    response: REVOKED,
    admin: true,
  },
  {
    method: 'get',
    path: '/audit-records',
    operationId: 'listAuditRecords',
    scopes: [],
    tag: 'Admin',
    summary: 'The audit record of admin actions and refused admin attempts, newest first',
    query: ListQuery,
    response: z.array(program.AuditRecord),
    admin: true,
  },
];

/** Every tag an operation uses, described once. */
const TAGS: Record<string, string> = {
  Coupons: 'Discounts, synced with a billing provider',
  'Promotional codes': 'Codes customers type, each tied to a coupon and optionally an affiliate',
  Affiliates: 'The partners of a program',
  Links: 'Referral links of affiliates, and the clicks on them',
  Referrals: 'Customers identified as referred by an affiliate',
  Sales: 'Payments attributed to an affiliate, with commission',
  Commissions: 'Commission plans, payouts of due commissions, and reports',
  'Fraud review': 'Risk signals, held commissions and their release or void, and affiliate statements',
  Webhooks: 'Endpoints that receive signed events, and the log of deliveries',
  'Webhook events': 'What a subscribed endpoint receives',
  Integrations:
    'Payment providers whose webhooks record sales and reversals (Stripe: checkout.session.completed, invoice.paid, invoice_payment.paid, charge.refunded, charge.dispute.created)',
  Admin: 'Programs and API keys, for operators (admin token)',
  Program: 'The program of the key: its own settings and its publishable keys',
  'Sign-up': 'The hosted sign-up page of a program, /join/{slug}, and applications to it',
  Browser: "What the tracking script calls from a shop's pages with a publishable key (pk_…)",
  Team: "The program's team in the console: members who sign in with an email, a password and optionally TOTP, each with a role (OWNER, ADMIN, FINANCE, ANALYST), their invites, and the program's secret API keys, which OWNERs manage. These take a member's session (the __Host-affiliate_console_session cookie, and X-CSRF-Token on writes), never an API key",
  'Affiliate portal':
    "Single-use links into the gateway-hosted portal where one affiliate sees its own links, codes, earnings and payouts (like Stripe's customer portal)",
};

const ERRORS: Record<string, string> = {
  '400': 'Invalid request: `error` names the first problem (the field and what is wrong); when there are several, `errors` lists every one',
  '401':
    'Authorization header missing, not Bearer, or token invalid; or, with no Authorization header, the console session of the cookie has ended',
  '403':
    "API access is not enabled for the program, or the key may not use this route (a scope it lacks, named in the message; a publishable key on a secret route, a secret key on a browser route, an origin not allowed); for a console session, the member's role does not allow the operation (`role_forbidden`) or a write lacks the session's X-CSRF-Token or the gateway's Origin",
  '404': 'The program of the token or console session no longer exists, or the object is not found',
  '429':
    'Rate limit exceeded for this token on this route and method, too many failed authentications from this address, or too many heavy operations (reports, payout runs, exports) of this program at once',
  '503': 'A service is unavailable; retry after Retry-After seconds',
};

const header = (description: string, schema: ZodTypeAny = z.string()) => schema.openapi({ description });
const REQUEST_ID = header('The request id, also in the logs; send X-Request-Id to choose it');
const RETRY_AFTER = header('Seconds to wait before retrying', z.string().regex(/^\d+$/));
/** draft-ietf-httpapi-ratelimit-headers (structured fields), and the three older headers kept for existing clients. */
const RATE_LIMIT_HEADERS = {
  'RateLimit-Policy': header(
    'The policy of this key, route and method, e.g. "key-route";q=100;w=1 (quota q requests per w seconds)',
  ).optional(),
  RateLimit: header('What is left of it, e.g. "key-route";r=99;t=1 (r requests remaining, t seconds until the quota resets)').optional(),
  'RateLimit-Limit': header('Requests allowed per window (older draft)', z.string().regex(/^\d+$/)).optional(),
  'RateLimit-Remaining': header('Requests left in this window (older draft)', z.string().regex(/^\d+$/)).optional(),
  'RateLimit-Reset': header('Seconds until the window resets (older draft)', z.string().regex(/^\d+$/)).optional(),
};

/** The headers the gateway sends with an answer of this status to this operation. */
function responseHeaders(operation: Operation, status: string): z.AnyZodObject {
  const headers: Record<string, ZodTypeAny> = { 'X-Request-Id': REQUEST_ID };
  // The public API is rate limited once a request is authenticated and routed.
  if (!operation.admin && !operation.team && status !== '401') Object.assign(headers, RATE_LIMIT_HEADERS);
  // A console session is a cookie, not a Bearer credential: its 401 names no scheme to retry with.
  if (status === '401' && !operation.team) headers['WWW-Authenticate'] = header('Bearer, with the reason as an RFC 6750 error');
  if (status === '429' || status === '503') headers['Retry-After'] = RETRY_AFTER;
  // Only the 409 of a request still running under the same Idempotency-Key says when to retry.
  if (status === '409' && takesIdempotencyKey(operation)) headers['Retry-After'] = RETRY_AFTER.optional();
  if (status === '200' && operation.method === 'get' && operation.query?.shape.startingAfter) {
    headers.Link = header('<…?limit=&startingAfter=<last id>>; rel="next" when there is a next page').optional();
  }
  if (takesIdempotencyKey(operation) && isKeptForReplay(Number(status))) {
    headers['Idempotent-Replayed'] = header(
      'true when this is the stored answer of an earlier request with the same Idempotency-Key (on POST /sales also: the sale already recorded with the same externalId and content)',
      z.literal('true'),
    ).optional();
  }
  return z.object(headers);
}

/** POST, PUT and DELETE of the public API, the gateway's own (program settings, publishable keys) included. */
const takesIdempotencyKey = (operation: Operation) =>
  !operation.admin && !operation.browser && !operation.team && operation.method !== 'get';

/** 409: a reused Idempotency-Key (public POSTs), or a change racing another on the same object (every write). */
function conflictDescription(operation: Operation): string | null {
  if (operation.method === 'get') return null;
  if (takesIdempotencyKey(operation))
    return 'Idempotency-Key already used with a different request or still in progress, or the object is being changed by another request; retry';
  return 'The object is being changed by another request right now; retry';
}

/** The answers of a team operation (the console's own: a member's session, or the sign-in and invite credentials). */
function teamErrorsOf(operation: Operation): Record<string, string> {
  const errors: Record<string, string> = {
    '401':
      operation.operationId === 'signIn'
        ? 'Wrong email or password (`credentials_invalid`, the same for an unknown email), or the TOTP code missing (`totp_required`) or wrong (`totp_invalid`)'
        : operation.operationId === 'acceptTeamInvite'
          ? 'The invite token is not one the gateway issued (`invite_invalid`)'
          : 'No live console session: signed out, idle too long, past its end, or revoked (`unauthenticated`)',
    '403':
      operation.team === 'anyone'
        ? 'An API key was sent (`team_session_required`): these take no API key'
        : `An API key was sent (\`team_session_required\`); a write without the session's X-CSRF-Token (\`csrf_token_invalid\`) or from another origin (\`origin_not_allowed\`)${operation.team === 'owner' ? "; or the member's role is not OWNER (`role_forbidden`)" : ''}`,
    '429':
      operation.operationId === 'signIn'
        ? 'Too many failed sign-ins for this email or from this address (`login_throttled`); retry after Retry-After seconds'
        : 'Too many requests from this address; retry after Retry-After seconds',
  };
  if (operation.body) {
    errors['400'] = 'Invalid request: `error` names the first problem (the field and what is wrong); `errors` lists every one';
    errors['413'] = 'Request body larger than the limit';
    errors['415'] = 'A body whose Content-Type is not application/json';
  }
  // As on every write: a change racing another on the same object (the platform's concurrent_modification).
  const racing = conflictDescription(operation);
  if (racing) errors['409'] = racing;
  if (operation.operationId === 'acceptTeamInvite')
    errors['410'] = 'The invite was already accepted (`invite_used`), withdrawn or expired (`invite_expired`)';
  if (operation.operationId === 'changeTeamMemberRole' || operation.operationId === 'removeTeamMember') {
    errors['404'] = 'No such member or invite in this program';
    errors['409'] = `The member is the last OWNER (\`last_owner\`): make another member OWNER first; or ${racing?.toLowerCase()}`;
  }
  if (operation.operationId === 'inviteTeamMember' || operation.operationId === 'acceptTeamInvite')
    errors['409'] = `This email is already a team member (\`member_exists\`); or ${racing?.toLowerCase()}`;
  if (operation.operationId === 'revokeOwnApiKey') errors['404'] = 'No such key in this program';
  return errors;
}

/** The session rule of a team operation, as a reader of the document needs it. */
function teamDescriptionOf(operation: Operation): string {
  if (operation.team === 'anyone') return 'Takes no session and no API key: the request carries its own credential.';
  const session =
    "Takes a team member's console session: the `__Host-affiliate_console_session` cookie (httpOnly, Secure, SameSite=Strict), and on a write the session's `X-CSRF-Token` and the gateway's own Origin. An API key is refused 403 `team_session_required`.";
  return operation.team === 'owner' ? `${session} OWNER only: other roles are refused 403 \`role_forbidden\`.` : session;
}

/** The scope rule of a public operation, as a reader of the document needs it. */
function scopeDescriptionOf(operation: Operation): string {
  const needs = `Needs an API key with the scope${scopesOf(operation).length > 1 ? 's' : ''} ${scopesOf(operation)
    .map((scope) => `\`${scope}\``)
    .join(' and ')} (a key created without scopes has them all); otherwise 403.`;
  const act = operation.sensitive;
  if (!act) return `${needs} ${rolesDescriptionOf(operation)}`;
  const conditions = {
    csv: ' With `Accept: text/csv` (full bank details) it',
    rotateSecret: ' With `rotateSecret: true` (the answer carries the new secret) it',
    payoutDetails: ' With `payoutDetails` (bank details set or cleared) it',
  };
  const condition = act.when ? conditions[act.when] : ' It';
  const alsoNeeds = act.when && !operation.scopes.includes(act.scope) ? ` also needs \`${act.scope}\`,` : '';
  return `${needs}${condition}${alsoNeeds} leaves a \`${act.action}\` entry in the program's audit record (GET /api/v1/audit-records) and is answered with \`Cache-Control: no-store\`. ${rolesDescriptionOf(operation)}`;
}

/** Which roles' console sessions may make a public operation: the gateway's judgement (roleAllows), said in the document. */
function rolesDescriptionOf(operation: Operation): string {
  const roles = team.TEAM_ROLES.filter((role) =>
    team.roleAllows(role, { operationId: operation.operationId, scopes: scopesOf(operation) }),
  );
  return `In a team member's console session (the \`__Host-affiliate_console_session\` cookie, and the session's X-CSRF-Token on a write), the roles ${roles.map((role) => `\`${role}\``).join(', ')} may make it; any other role gets 403 \`role_forbidden\`.`;
}

export function buildOpenApiDocument(serverUrl = '/'): ReturnType<OpenApiGeneratorV31['generateDocument']> {
  const registry = new OpenAPIRegistry();
  const bearer = registry.registerComponent('securitySchemes', 'bearerAuth', { type: 'http', scheme: 'bearer' });
  const adminBearer = registry.registerComponent('securitySchemes', 'adminToken', { type: 'http', scheme: 'bearer' });
  const consoleSession = registry.registerComponent('securitySchemes', 'consoleSession', {
    type: 'apiKey',
    in: 'cookie',
    name: '__Host-affiliate_console_session',
    description: "A team member's console session (POST /api/v1/team/session or an accepted invite); writes also send its X-CSRF-Token",
  });
  const publishableBearer = registry.registerComponent('securitySchemes', 'publishableKey', {
    type: 'http',
    scheme: 'bearer',
    description: "A publishable key (pk_…): only the browser routes, only from an origin in the program's allowedOrigins",
  });

  // Each webhook body has its own schema, from the event catalogue (the gateway's webhooks section refers to them).
  for (const type of PUBLIC_EVENT_TYPES)
    registry.register(payloadComponentName(type), payloadSchemaOf(type).openapi({ example: examplePayloadOf(type) }));

  for (const operation of API_OPERATIONS) {
    const errorBody = NUMBERED_ERROR_OPERATIONS.includes(`${operation.method.toUpperCase()} ${operation.path}`)
      ? NumberedErrorBody
      : ErrorBody;
    const errors: Record<string, string> = operation.team ? teamErrorsOf(operation) : { ...ERRORS };
    const conflict = operation.team ? null : conflictDescription(operation);
    if (conflict) errors['409'] = conflict;
    if (operation.admin) delete errors['403'];
    if (operation.body && !operation.team) {
      errors['413'] = 'Request body larger than the limit (BODY_LIMIT, 1 MB by default)';
      errors['415'] = 'A body whose Content-Type is not application/json; the message names the type accepted';
    }
    const csv = { 'text/csv': { schema: z.string().openapi({ description: 'RFC 4180 CSV with a header row' }) } };
    const json = { 'application/json': { schema: operation.response } };
    const responses: RouteConfig['responses'] = {
      '200': {
        description: 'Success',
        headers: responseHeaders(operation, '200'),
        content: operation.csv === 'only' ? csv : operation.csv === 'also' ? { ...json, ...csv } : json,
      },
    };
    for (const [status, description] of Object.entries(errors)) {
      responses[status] = {
        description,
        headers: responseHeaders(operation, status),
        content: { 'application/json': { schema: errorBody } },
      };
    }
    const path = operation.path.replace(/\{(\w+)\}/g, '{$1}');
    registry.registerPath({
      method: operation.method,
      path: operation.admin ? `/admin/v1${path}` : `/api/v1${path}`,
      operationId: operation.operationId,
      summary: operation.summary,
      description:
        operation.admin || operation.browser
          ? OPERATION_DESCRIPTIONS[operation.operationId]
          : `${OPERATION_DESCRIPTIONS[operation.operationId]}\n\n${operation.team ? teamDescriptionOf(operation) : scopeDescriptionOf(operation)}`,
      ...(operation.admin || operation.browser || operation.team ? {} : { 'x-required-scopes': scopesOf(operation) }),
      tags: [operation.tag],
      // A public operation takes an API key or, in its place, a team member's console session (judged by its role).
      security:
        operation.team === 'anyone'
          ? []
          : operation.admin || operation.browser || operation.team
            ? [{ [(operation.admin ? adminBearer : operation.browser ? publishableBearer : consoleSession).name]: [] }]
            : [{ [bearer.name]: [] }, { [consoleSession.name]: [] }],
      request: {
        ...(operation.body
          ? { body: { required: !operation.bodyOptional, content: { 'application/json': { schema: operation.body } } } }
          : {}),
        ...(operation.query ? { query: operation.query } : {}),
        ...(path.includes('{id}') ? { params: z.object({ id: z.string().openapi({ description: pathIdDescription(path) }) }) } : {}),
        ...(takesIdempotencyKey(operation)
          ? {
              headers: z.object({
                'idempotency-key': z.string().max(255).optional().openapi({
                  description:
                    'Makes a retry safe: the same key and request within 24 h get the first answer again. The same request is the same method, path and JSON body by meaning (key order and whitespace do not matter); the key with another request is a 409, and while the first is still running a 409 with Retry-After',
                }),
              }),
            }
          : {}),
      },
      responses,
    });
  }

  // Stripe's own webhooks to a program (gateway/src/proxy/integration-routes.ts): outside /api/v1 and
  // without a key, because Stripe presents none; the Stripe-Signature, made with the program's secret, authenticates them.
  const errorOf = (description: string) => ({
    description,
    headers: z.object({ 'X-Request-Id': REQUEST_ID }),
    content: { 'application/json': { schema: ErrorBody } },
  });
  registry.registerPath({
    method: 'post',
    path: '/integrations/stripe/{programId}/webhooks',
    operationId: 'receiveStripeWebhook',
    description: OPERATION_DESCRIPTIONS.receiveStripeWebhook,
    summary:
      "Where Stripe sends the program's events (checkout.session.completed, invoice.paid, invoice_payment.paid, charge.refunded, charge.dispute.created); give Stripe this URL",
    tags: ['Integrations'],
    security: [],
    request: {
      params: z.object({
        programId: z
          .string()
          .uuid()
          .openapi({ description: 'The id of the program, as GET /api/v1/integrations/stripe shows it in webhookUrl' }),
      }),
      headers: z.object({
        'stripe-signature': z
          .string()
          .openapi({ description: "Stripe's signature of the exact body, checked with the program's stored webhook secret" }),
      }),
      body: {
        required: true,
        content: {
          'application/json': { schema: z.record(z.unknown()).openapi({ description: 'A Stripe event, exactly as Stripe sends it' }) },
        },
      },
    },
    responses: {
      '200': {
        description:
          'Received: processed, or ignored (an event type or an object it does not act on), or a replay of an event already processed',
        headers: z.object({ 'X-Request-Id': REQUEST_ID }),
        content: { 'application/json': { schema: integration.StripeWebhookReceipt } },
      },
      '400': errorOf('A missing or wrong signature, or no webhook secret stored for the program: nothing is recorded'),
      '404': errorOf('No such program'),
      '409': errorOf('The same event is being processed right now; Stripe retries'),
      '413': errorOf('Request body larger than the limit'),
      '429': {
        ...errorOf('Too many requests from this address'),
        headers: z.object({ 'X-Request-Id': REQUEST_ID, 'Retry-After': RETRY_AFTER }),
      },
      '503': {
        ...errorOf('A service is unavailable; Stripe retries'),
        headers: z.object({ 'X-Request-Id': REQUEST_ID, 'Retry-After': RETRY_AFTER }),
      },
    },
  });

  // The hosted sign-up (gateway/src/signup/routes.ts): outside /api/v1 and without a key, because
  // applicants have none; per-address limits, the honeypot and the form's signed token stand in.
  const html = (description: string) => ({
    description,
    headers: z.object({ 'X-Request-Id': REQUEST_ID }),
    content: { 'text/html': { schema: z.string() } },
  });
  const slugParam = z.object({ slug: signup.ProgramSlug });
  // A refusal answers a form post from the hosted page with an HTML page, and JSON with the error body.
  const errorOrPage = (description: string) => {
    const error = errorOf(description);
    return { ...error, content: { ...error.content, 'text/html': { schema: z.string() } } };
  };
  registry.registerPath({
    method: 'get',
    path: '/join/{slug}',
    operationId: 'getSignupPage',
    description: OPERATION_DESCRIPTIONS.getSignupPage,
    summary: "The program's sign-up page (HTML, the console's CSP; framable only by the program's allowedOrigins)",
    tags: ['Sign-up'],
    security: [],
    request: { params: slugParam },
    responses: {
      '200': html("The form, with the program's intro text, questions and terms"),
      '404': html('No program with this slug, or its sign-up is disabled'),
      // The page is under the per-address limit of every request without a credential, which the
      // console's sign-in and team routes share: a fuzzer (or a script) that spends it meets this too.
      '429': {
        ...errorOf('Too many requests without a credential from this address (ANONYMOUS_RATE_LIMIT_*); retry after Retry-After'),
        headers: z.object({ 'X-Request-Id': REQUEST_ID, 'Retry-After': RETRY_AFTER }),
      },
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/join/{slug}',
    operationId: 'applyToProgram',
    description: OPERATION_DESCRIPTIONS.applyToProgram,
    summary:
      "Apply to the program: JSON from the program's own form (CORS: only its allowedOrigins; no Origin: a backend), or form-encoded from the hosted page (its own origin and signed form token only, answered with an HTML page). The affiliate is created with its answers and first link (affiliate.created), PENDING when the program requires approval",
    tags: ['Sign-up'],
    security: [],
    request: {
      params: slugParam,
      body: {
        required: true,
        content: {
          'application/json': { schema: signup.SignupSubmission },
          'application/x-www-form-urlencoded': {
            schema: z.record(z.string()).openapi({
              description:
                "The hosted page's fields: firstName, lastName, email, answers[<question id>], formToken, and the honeypot `website`, which a person leaves empty",
            }),
          },
        },
      },
    },
    responses: {
      '200': html(
        'Form-encoded from the hosted page: the result page (the application is in, or a filled honeypot, which creates nothing); a refused form comes back as a 400 page listing the problems',
      ),
      '201': {
        description: 'The application is in',
        headers: z.object({ 'X-Request-Id': REQUEST_ID }),
        content: { 'application/json': { schema: signup.SignupResult } },
      },
      '400': errorOrPage(
        'Every problem at once in `errors` (a form post: the form again, listing them): a missing required answer, an answer to no question, a malformed URL, a choice outside the options, a field missing or malformed; or an email already an affiliate of the program. Nothing is created',
      ),
      '403': errorOf("A browser origin outside the program's allowedOrigins (JSON), or a form not sent from its own page"),
      '404': errorOrPage('No program with this slug, or its sign-up is disabled (a form post: an HTML page that says so)'),
      '409': errorOf('The same application is being recorded at this very moment (a double submit); retry'),
      '413': errorOf('Request body larger than 64 KB'),
      '415': errorOf('A body neither application/json nor application/x-www-form-urlencoded'),
      '429': {
        ...errorOf('Too many applications from this address to this program (SIGNUP_RATE_LIMIT_*)'),
        headers: z.object({ 'X-Request-Id': REQUEST_ID, 'Retry-After': RETRY_AFTER }),
      },
      '503': {
        ...errorOf('A service is unavailable; retry'),
        headers: z.object({ 'X-Request-Id': REQUEST_ID, 'Retry-After': RETRY_AFTER }),
      },
    },
  });

  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Affiliate Program Service API',
      version: '1.0.0',
      description: 'Coupons, promotional codes, affiliates, links, referrals, sales and signed webhook events.',
      contact: { name: 'Platform team', url: 'https://github.com/affiliate-platform' },
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: serverUrl }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
  });
  addOperationExamples(document);
  withoutRepeatedMembers(document);
  withParameterDescriptions(document);
  return document;
}

/** What the `{id}` of an admin path names, from the collection it follows. */
function pathIdDescription(path: string): string {
  if (path.startsWith('/api-keys/')) return 'The id of the API key (from its creation or the key list)';
  if (path.startsWith('/publishable-keys/')) return 'The id of the publishable key';
  return 'The id of the program';
}

/**
 * zod-to-openapi puts a query field's `.openapi({ description })` on the parameter's schema, where
 * linters (Spectral's oas3-parameter-description, Redocly's parameter-description) and reference
 * pages do not look: the description moves to the parameter, so contracts describe query fields
 * the same way as body fields.
 */
function withParameterDescriptions(document: ReturnType<OpenApiGeneratorV31['generateDocument']>): void {
  for (const item of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(item as Record<string, { parameters?: unknown[] }>)) {
      for (const parameter of operation.parameters ?? []) {
        const { description, schema } = parameter as { description?: string; schema?: { description?: string } };
        if (description || !schema?.description) continue;
        (parameter as { description?: string }).description = schema.description;
        delete schema.description;
      }
    }
  }
}

/**
 * zod-to-openapi writes `{"type":"null"}` twice into the anyOf of a registered schema or null
 * (and drops the null altogether when `.nullable()` is used on one): a member listed twice is
 * harmless to validators but breaks client generators, so the document lists each once.
 */
function withoutRepeatedMembers(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(withoutRepeatedMembers);
  if (typeof node !== 'object' || node === null) return;
  const schema = node as { anyOf?: unknown[] };
  if (Array.isArray(schema.anyOf)) {
    const seen = new Set<string>();
    schema.anyOf = schema.anyOf.filter((member) => {
      const key = JSON.stringify(member);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  }
  Object.values(node).forEach(withoutRepeatedMembers);
}
