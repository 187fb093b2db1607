/**
 * A request and an answer for every operation of the document, from the one little world of
 * event-examples.ts (Jane Doe of program Acme, her link `jane`, code JANE20, a 99 USD sale): the
 * document shows them beside each schema, and the code samples (code-samples.ts) are written from
 * them. gateway/test/openapi.operation-examples.test.ts parses each with the operation's own schemas,
 * so an example that drifts from its contract fails the build.
 */
import * as world from './event-examples';
import { PUBLIC_EVENT_TYPES } from './events';
import { codeSamplesOf, type SampledOperation } from './code-samples';
import { EVENT_CATALOGUE, examplePayloadOf } from './event-catalogue';
import { CSV_COLUMNS } from './csv-columns';
import { defaultErrorCodeOf, type ErrorCode } from './errors';

export type OperationExample = {
  /** Path parameters ({id}, {slug}, {programId}). */
  path?: Record<string, string>;
  query?: Record<string, string | number>;
  /** The JSON body sent (absent: the operation takes none). */
  request?: unknown;
  /** The success body (a string for text/csv or text/html). */
  response: unknown;
  /** The success body as CSV, for a JSON answer that also answers text/csv (format=csv). */
  csv?: string;
  /** The form-encoded request (application/x-www-form-urlencoded), as a browser posts a form. */
  form?: Record<string, string>;
  /** The HTML page answered to that form, and its status. */
  page?: { status: string; html: string };
  /** The success status when it is not 200. */
  status?: string;
  /**
   * The refusal an integrator meets first. `request`, when given, is the body that gets it: the test
   * checks that the operation's schema refuses that body with exactly this message.
   */
  error: { status: string; message: string; request?: unknown; code?: ErrorCode; param?: string };
};

const at = world.OCCURRED_AT;
const later = '2025-01-15T10:31:00.000Z';
const { affiliate, referral, sale, coupon, promotionalCode } = world;
const program = { ...world.program, reportingCurrency: 'USD' };
const PROGRAM_ID = program.id;
const AFFILIATE_ID = affiliate.id;
const LINK_ID = affiliate.affiliateLinks[0]!.id;
const COMMISSION = sale.commissions[0]!;
const PAYOUT_ID = COMMISSION.payoutId;
const PLAN_ID = affiliate.commissionPlan.id;
/** The objects the event examples do not have, each with an id of its own. */
const {
  endpoint: ENDPOINT_ID,
  delivery: DELIVERY_ID,
  apiKey: API_KEY_ID,
  publishableKey: PUBLISHABLE_KEY_ID,
  portalSession: PORTAL_SESSION_ID,
  auditRecord: AUDIT_RECORD_ID,
} = {
  endpoint: '5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d',
  delivery: '6b7c8d9e-0f1a-4b2c-9d3e-4f5a6b7c8d9e',
  apiKey: '7c8d9e0f-1a2b-4c3d-8e4f-5a6b7c8d9e0f',
  publishableKey: '8d9e0f1a-2b3c-4d4e-9f5a-6b7c8d9e0f1a',
  portalSession: '9e0f1a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b',
  auditRecord: '0f1a2b3c-4d5e-4f6a-9b7c-8d9e0f1a2b3c',
};
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';

/** Rows as services/platform/src/http/csv.ts writes them: every cell quoted, CRLF line ends, the header row first. */
const csvOf = (rows: (string | number | null)[][]) => rows.map((row) => `${row.map((cell) => `"${cell ?? ''}"`).join(',')}\r\n`).join('');

const deleted = (id: string) => ({ id, deleted: true });
const revoked = (id: string) => ({ id, revoked: true });

const link = {
  id: LINK_ID,
  link: 'jane',
  previousLinks: [],
  affiliateId: AFFILIATE_ID,
  clicks: 412,
  referrals: 37,
  sales: 12,
  totalRevenue: 1188,
  salesByCurrency: { USD: 12 },
  revenueByCurrency: { USD: 1188 },
  fullURLs: [{ baseUrl: 'https://shop.example.com/', fullUrl: 'https://shop.example.com/?ref=jane' }],
  createdAt: at,
  updatedAt: at,
};

const plan = {
  id: PLAN_ID,
  name: 'Partners 20%',
  commissionType: 'PERCENTAGE',
  rate: 20,
  currency: null,
  firstPaymentRate: 30,
  recurring: 'LIMITED',
  recurringMonths: 12,
  holdDays: 30,
  minimumPayout: 50,
  tiers: [{ metric: 'SALES_COUNT', threshold: 10, rate: 25 }],
  isDefault: true,
  programId: PROGRAM_ID,
  createdAt: at,
  updatedAt: at,
};

/** The payouts as their CSV (services/sale/src/entry-points/api/csv.ts): what a mass-payout tool takes. */
const payoutsCsv = csvOf([
  [...CSV_COLUMNS.payouts],
  [PAYOUT_ID, AFFILIATE_ID, 'Jane Doe', 'jane@example.com', 'PAYPAL', 'jane.payouts@example.com', '', '', '', '19.80', 'USD', 'PENDING'],
]);

const payout = {
  id: PAYOUT_ID,
  affiliateId: AFFILIATE_ID,
  amount: 19.8,
  currency: 'USD',
  status: 'PENDING',
  commissions: [{ saleId: sale.id, commissionId: COMMISSION.id, amount: 19.8 }],
  payee: { name: 'Jane Doe', email: affiliate.email, payoutDetails: affiliate.payoutDetails },
  externalReference: null,
  programId: PROGRAM_ID,
  createdAt: '2025-02-15T09:00:00.000Z',
  updatedAt: '2025-02-15T09:00:00.000Z',
  paidAt: null,
};

const heldCommission = {
  ...COMMISSION,
  status: 'HELD',
  payoutCreated: false,
  payoutId: null,
  decisions: [{ action: 'HOLD', at, by: { kind: 'RISK_RULES', keyId: null, keyPrefix: null }, reason: 'COOKIE_STUFFING' }],
};
/** The sale after a reviewer's decision on its held commission (POST /commissions/release or /void). */
const reviewed = (status: 'PENDING' | 'VOID', action: 'RELEASE' | 'VOID', reason: string) => ({
  ...sale,
  commissions: [
    {
      ...heldCommission,
      status,
      decisions: [
        ...heldCommission.decisions,
        { action, at: later, by: { kind: 'API_KEY', keyId: API_KEY_ID, keyPrefix: 'ak_live_3xKq' }, reason },
      ],
    },
  ],
  updatedAt: later,
});

const endpoint = {
  id: ENDPOINT_ID,
  url: 'https://hooks.example.com/affiliates',
  eventTypes: ['sale.*', 'affiliate.created'],
  description: 'Order system',
  active: true,
  disabledReason: null,
  ordering: 'NONE',
  previousSecretExpiresAt: null,
  createdAt: at,
  updatedAt: at,
};

const attempt = { at, statusCode: 200, latencyMs: 84, responseExcerpt: 'ok', responseBytes: 2, error: null, traceId: TRACE_ID };
const delivery = {
  id: DELIVERY_ID,
  endpointId: ENDPOINT_ID,
  eventId: world.EVENT_ID,
  eventType: 'sale.created',
  status: 'succeeded',
  attempts: [attempt],
  nextAttemptAt: null,
  createdAt: at,
  updatedAt: at,
};

const publishableKey = {
  id: PUBLISHABLE_KEY_ID,
  programId: PROGRAM_ID,
  key: 'pk_live_GG50VFxrheI0VPfz0LPmOd94hTsvAPuN',
  createdAt: at,
  revokedAt: null,
};
const apiKeySummary = {
  id: API_KEY_ID,
  programId: PROGRAM_ID,
  displayPrefix: 'ak_live_3xKq',
  scopes: ['read', 'write'],
  createdAt: at,
  revokedAt: null,
};
const stripe = { configured: true, webhookSecretLast4: 'x9Qa', webhookUrl: `/integrations/stripe/${PROGRAM_ID}/webhooks` };

/** The gateway's 403 for a key without the scope (gateway/src/auth/scopes.ts). */
const lacksScope = (scope: string, method: string, path: string) =>
  `This API key lacks the "${scope}" scope needed for ${method} ${path}; create a key with it (POST /admin/v1/programs/{id}/api-keys {"scopes": [...]})`;

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const notFound = (message: string) => ({ status: '404', message });

/** A secret key made by the operator (admin API) or by an OWNER in the console: the same request and answer. */
const apiKeyCreation: OperationExample = {
  request: { scopes: ['read', 'write'] },
  response: {
    id: API_KEY_ID,
    key: 'ak_live_3xKqfL6Cr0LXSq9n_2TMwygLWJH2scNA7ZL1tMZ9Xtc',
    programId: PROGRAM_ID,
    scopes: ['read', 'write'],
    createdAt: at,
  },
  error: { status: '400', message: 'scopes: each scope once', request: { scopes: ['read', 'read'] } },
};

/** The team of the console (issue 32): Ada, the program's OWNER, and an invite for Grace in finance. */
const MEMBER_ID = 'mbr_9f1c2d3e-4b5a-4c6d-8e7f-001122334455';
const INVITE_TOKEN = '0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d.Qm9vdHN0cmFwVG9rZW5PZkFuSW52aXRlRXhhbXBsZTEyMzQ';
const teamMember = { id: MEMBER_ID, email: 'ada@example.com', role: 'OWNER', totpEnabled: false, createdAt: at, lastSignInAt: later };
const teamInvite = {
  id: '0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d',
  email: 'grace@example.com',
  role: 'FINANCE',
  expiresAt: '2025-01-18T10:30:00.000Z',
};
const teamSession = {
  member: teamMember,
  program: { id: PROGRAM_ID, name: program.name },
  csrfToken: 'c3JmVG9rZW5PZlRoZUNvbnNvbGVTZXNzaW9uRXhhbXBsZTE',
  allowedOperations: ['getAffiliates', 'updateAffiliate', 'getTeamMembers', 'inviteTeamMember'],
  idleExpiresAt: '2025-01-15T11:01:00.000Z',
  expiresAt: '2025-01-15T22:31:00.000Z',
};

export const OPERATION_EXAMPLES: Record<string, OperationExample> = {
  createCoupon: {
    request: { name: 'Spring 20', couponType: 'PERCENTAGE', percentOff: 20, duration: 'once', maxRedemptions: 100 },
    response: { ...coupon, timesRedeemed: 0, promotionalCodes: [] },
    error: { status: '400', message: 'percentOff must be between 1 and 100', request: { name: 'Spring 20', percentOff: 120 } },
  },
  getCoupons: { query: { id: coupon.id }, response: coupon, error: notFound(`No coupon with id "${UNKNOWN_ID}" in this program`) },
  updateCoupon: {
    request: { couponId: coupon.id, maxRedemptions: 200, redeemBy: '2025-06-30T23:59:59.000Z' },
    response: { ...coupon, maxRedemptions: 200, redeemBy: '2025-06-30T23:59:59.000Z', updatedAt: later },
    error: { status: '400', message: 'Unknown field in body: percentOff', request: { couponId: coupon.id, percentOff: 30 } },
  },
  deleteCoupon: {
    request: { couponId: coupon.id },
    response: { message: 'Coupon deleted successfully', deletedCoupon: { id: coupon.id, name: coupon.name } },
    error: { status: '404', message: `Coupon ${UNKNOWN_ID} not found in this program` },
  },
  createPromotionalCode: {
    request: { couponId: coupon.id, code: 'JANE20', affiliateId: AFFILIATE_ID },
    response: { ...promotionalCode, timesRedeemed: 0 },
    error: {
      status: '400',
      message: 'code is required unless isAutoGenerated is true',
      request: { couponId: coupon.id, affiliateId: AFFILIATE_ID },
    },
  },
  issuePromotionalCodesInBulk: {
    request: {
      couponId: coupon.id,
      affiliateIds: [AFFILIATE_ID],
      prefix: 'SPRING',
      codeStructure: { firstName: true, randomChars: true },
      randomCharsLength: 4,
    },
    response: {
      issued: [{ ...promotionalCode, code: 'SPRINGJANE7QX2', isAutoGenerated: true, timesRedeemed: 0 }],
      alreadyIssued: [],
      skipped: [],
      nextStartingAfter: null,
    },
    error: { status: '400', message: 'send either affiliateIds or allActive: true', request: { couponId: coupon.id } },
  },
  getPromotionalCodes: {
    query: { code: 'JANE20' },
    response: promotionalCode,
    error: notFound(`No promotional code with code "JANE21" in this program`),
  },
  updatePromotionalCode: {
    request: { promotionalCodeId: promotionalCode.id, active: false },
    response: { ...promotionalCode, active: false, updatedAt: later },
    error: notFound(`Promotional code ${UNKNOWN_ID} not found in this program`),
  },
  deletePromotionalCode: {
    request: { promotionalCodeId: promotionalCode.id },
    response: deleted(promotionalCode.id),
    error: notFound(`No promotional code with code "JANE21" in this program`),
  },
  createAffiliate: {
    request: { firstName: 'Jane', lastName: 'Doe', email: 'jane@example.com', affiliateLink: 'jane' },
    response: { ...affiliate, promotionalCodes: [] },
    error: { status: '400', message: 'The requested affiliate link is already in use', code: 'link_taken', param: 'link' },
  },
  getAffiliates: {
    query: { email: 'jane@example.com' },
    response: affiliate,
    csv: csvOf([
      [...CSV_COLUMNS.affiliates],
      [
        AFFILIATE_ID,
        affiliate.firstName,
        affiliate.lastName,
        affiliate.email,
        affiliate.status,
        affiliate.commissionRate,
        affiliate.createdAt,
      ],
    ]),
    error: { status: '400', message: 'Unknown field in query: name' },
  },
  updateAffiliate: {
    request: { affiliateId: AFFILIATE_ID, status: 'ACTIVE', payoutDetails: { method: 'PAYPAL', email: 'jane.payouts@example.com' } },
    response: { ...affiliate, updatedAt: later },
    error: {
      status: '400',
      message: 'payoutDetails.email: is required for PAYPAL payouts',
      request: { affiliateId: AFFILIATE_ID, payoutDetails: { method: 'PAYPAL' } },
    },
  },
  deleteAffiliate: {
    request: { affiliateId: AFFILIATE_ID },
    response: deleted(AFFILIATE_ID),
    error: notFound(`No affiliate with id ${UNKNOWN_ID} in this program`),
  },
  createLink: {
    request: { link: 'jane-blog', affiliateId: AFFILIATE_ID },
    response: {
      ...link,
      id: '3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f',
      link: 'jane-blog',
      clicks: 0,
      referrals: 0,
      sales: 0,
      totalRevenue: 0,
      salesByCurrency: {},
      revenueByCurrency: {},
      fullURLs: [{ baseUrl: 'https://shop.example.com/', fullUrl: 'https://shop.example.com/?ref=jane-blog' }],
    },
    error: {
      status: '400',
      message: 'Link can only contain letters, numbers, and hyphens',
      param: 'link',
      request: { link: 'jane blog', affiliateId: AFFILIATE_ID },
    },
  },
  getLinks: { query: { affiliateId: AFFILIATE_ID }, response: [link], error: { status: '400', message: 'Unknown field in query: slug' } },
  renameLink: {
    request: { linkId: LINK_ID, newLink: 'jane-cooks' },
    response: {
      ...link,
      link: 'jane-cooks',
      previousLinks: [{ link: 'jane', reservedUntil: null }],
      fullURLs: [{ baseUrl: 'https://shop.example.com/', fullUrl: 'https://shop.example.com/?ref=jane-cooks' }],
      updatedAt: later,
    },
    error: { status: '400', message: 'This link already exists for this affiliate program', code: 'link_taken', param: 'link' },
  },
  deleteLink: {
    request: { linkId: LINK_ID },
    response: deleted(LINK_ID),
    error: { status: '400', message: "link: jane is the affiliate's last link; every affiliate keeps at least one", code: 'last_link' },
  },
  recordClick: {
    request: {
      link: 'jane',
      visitorId: 'v_2f8a9c1e7b',
      landingUrl: 'https://shop.example.com/?ref=jane',
      userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 Safari/605.1.15',
      ipAddress: '203.0.113.7',
    },
    response: { clickId: 1042, link: 'jane', affiliateId: AFFILIATE_ID, counted: true, reason: null },
    error: { status: '400', message: 'link is required', request: { visitorId: 'v_2f8a9c1e7b' } },
  },
  createReferral: {
    request: { clickId: 1042, email: 'customer@example.com', name: 'Sam Customer', referredUserExternalId: 'user_8812', plan: 'pro' },
    response: referral,
    error: {
      status: '400',
      message: 'one of clickId, link, affiliateId or affiliateEmail is required',
      request: { email: 'customer@example.com' },
    },
  },
  getReferrals: {
    query: { id: referral.id },
    response: referral,
    csv: csvOf([
      [...CSV_COLUMNS.referrals],
      [
        referral.id,
        referral.affiliateId,
        referral.linkId,
        referral.email,
        referral.name,
        referral.referredUserExternalId,
        referral.plan,
        referral.status,
        referral.createdAt,
      ],
    ]),
    error: notFound(`No referral with id ${UNKNOWN_ID} in this program`),
  },
  updateReferral: {
    request: { referralId: referral.id, plan: 'business', status: 'active' },
    response: { message: 'Referral updated successfully', referral: { ...referral, plan: 'business', updatedAt: later } },
    error: notFound(`No referral with id ${UNKNOWN_ID} in this program`),
  },
  deleteReferral: {
    request: { referralId: referral.id },
    response: deleted(referral.id),
    error: notFound(`No referral with id ${UNKNOWN_ID} in this program`),
  },
  createSale: {
    request: { promoCode: 'JANE20', totalEarned: 99, currency: 'USD', externalId: 'pi_3NxExample', customerId: 'cus_Example' },
    response: {
      ...sale,
      referralId: null,
      linkId: null,
      promotionalCodeId: promotionalCode.id,
      couponId: coupon.id,
      promoCode: 'JANE20',
      commissions: [{ ...COMMISSION, status: 'PENDING', payoutCreated: false, payoutId: null }],
      attribution: { method: 'PROMO_CODE', clickId: null, clickedAt: null, ageSeconds: null, affiliateId: AFFILIATE_ID },
      risk: { signals: [], action: 'NONE' },
    },
    error: { status: '400', message: 'one of promoCode, referralId or email is required', request: { totalEarned: 99 } },
  },
  getSales: {
    query: { affiliateId: AFFILIATE_ID, limit: 20 },
    response: [sale],
    csv: csvOf([
      [...CSV_COLUMNS.sales],
      [
        sale.id,
        sale.affiliateId,
        sale.referralId,
        sale.promoCode,
        sale.externalId,
        sale.customerId,
        '99.00',
        sale.currency,
        '19.80',
        COMMISSION.currency,
        sale.paymentTrigger,
        sale.paidAt,
        sale.createdAt,
      ],
    ]),
    error: { status: '400', message: 'limit: Number must be less than or equal to 1000' },
  },
  updateSale: {
    request: { saleId: sale.id, totalEarned: 89 },
    response: {
      ...sale,
      totalEarned: 89,
      commissionEarned: 17.8,
      commissions: [{ ...COMMISSION, amount: 17.8, status: 'PENDING', payoutCreated: false, payoutId: null }],
      updatedAt: later,
    },
    error: notFound(`No sale with id ${UNKNOWN_ID} in this program`),
  },
  deleteSale: {
    request: { saleId: sale.id },
    response: deleted(sale.id),
    error: notFound(`No sale with id ${UNKNOWN_ID} in this program`),
  },
  createCommissionPlan: {
    request: {
      name: 'Partners 20%',
      commissionType: 'PERCENTAGE',
      rate: 20,
      firstPaymentRate: 30,
      recurring: 'LIMITED',
      recurringMonths: 12,
      holdDays: 30,
      minimumPayout: 50,
      isDefault: true,
      tiers: [{ metric: 'SALES_COUNT', threshold: 10, rate: 25 }],
    },
    response: plan,
    error: {
      status: '400',
      message: 'recurringMonths is required when recurring is LIMITED',
      request: { name: 'Partners 20%', commissionType: 'PERCENTAGE', rate: 20, recurring: 'LIMITED' },
    },
  },
  getCommissionPlans: {
    query: { id: PLAN_ID },
    response: plan,
    error: notFound(`No commission plan with id ${UNKNOWN_ID} in this program`),
  },
  updateCommissionPlan: {
    request: { commissionPlanId: PLAN_ID, rate: 22 },
    response: { ...plan, rate: 22, updatedAt: later },
    error: { status: '400', message: 'rate: a PERCENTAGE rate (also firstPaymentRate and tier rates) is at most 100' },
  },
  deleteCommissionPlan: {
    request: { commissionPlanId: PLAN_ID },
    response: deleted(PLAN_ID),
    error: {
      status: '400',
      message: `Commission plan ${PLAN_ID} cannot be deleted: 3 affiliates are on it; move them to another plan first`,
      code: 'commission_plan_in_use',
    },
  },
  createPayouts: {
    request: { currency: 'USD' },
    response: [payout],
    error: {
      status: '429',
      message: 'Too many heavy operations (reports, payout runs, exports) of this program at once: at most 2; retry when one has finished',
    },
  },
  getPayouts: {
    query: { status: 'PENDING' },
    response: [payout],
    csv: payoutsCsv,
    error: { status: '403', message: lacksScope('finance', 'GET', '/api/v1/payouts') },
  },
  updatePayout: {
    request: { payoutId: PAYOUT_ID, status: 'PAID', externalReference: 'paypal-batch-42' },
    response: { ...payout, status: 'PAID', externalReference: 'paypal-batch-42', paidAt: later, updatedAt: later },
    error: notFound(`No payout with id ${UNKNOWN_ID} in this program`),
  },
  exportPayout: {
    query: { payoutId: PAYOUT_ID },
    response: payoutsCsv,
    error: notFound(`No payout with id ${UNKNOWN_ID} in this program`),
  },
  getCommissions: {
    query: { status: 'HELD' },
    response: [
      {
        ...heldCommission,
        saleId: sale.id,
        risk: {
          signals: [
            {
              type: 'COOKIE_STUFFING',
              detail: 'the click came 2 s before the conversion from a visitor with clicks of 3 affiliates in the hour',
            },
          ],
          action: 'HOLD',
        },
      },
    ],
    csv: csvOf([
      [...CSV_COLUMNS.commissions],
      [
        heldCommission.id,
        sale.id,
        heldCommission.affiliateId,
        '19.80',
        heldCommission.currency,
        'HELD',
        heldCommission.availableAt,
        heldCommission.adjusts,
        heldCommission.payoutId,
        sale.createdAt,
      ],
    ]),
    error: {
      status: '400',
      message: "status: Invalid enum value. Expected 'PENDING' | 'DUE' | 'HELD' | 'PAID' | 'VOID', received 'ON_HOLD'",
    },
  },
  releaseCommission: {
    request: { saleId: sale.id, commissionId: COMMISSION.id, note: 'customer verified' },
    response: reviewed('PENDING', 'RELEASE', 'customer verified'),
    error: {
      status: '400',
      message: `commissionId: commission ${COMMISSION.id} is DUE; only a HELD commission can be released`,
      code: 'status_transition_invalid',
    },
  },
  voidCommission: {
    request: { saleId: sale.id, commissionId: COMMISSION.id, reason: 'self-referral confirmed' },
    response: reviewed('VOID', 'VOID', 'self-referral confirmed'),
    error: { status: '400', message: 'reason is required', request: { saleId: sale.id, commissionId: COMMISSION.id } },
  },
  getAffiliateStatement: {
    query: { affiliateId: AFFILIATE_ID, currency: 'USD', from: '2025-01-01T00:00:00.000Z' },
    response: {
      affiliateId: AFFILIATE_ID,
      currency: 'USD',
      from: '2025-01-01T00:00:00.000Z',
      to: '2025-03-01T00:00:00.000Z',
      openingBalance: 0,
      entries: [
        {
          type: 'EARNED',
          at,
          amount: 19.8,
          saleId: sale.id,
          commissionId: COMMISSION.id,
          payoutId: null,
          description: `commission on sale ${sale.id}`,
        },
        {
          type: 'PAID_OUT',
          at: '2025-02-16T09:00:00.000Z',
          amount: -19.8,
          saleId: sale.id,
          commissionId: COMMISSION.id,
          payoutId: PAYOUT_ID,
          description: `payout ${PAYOUT_ID} (paypal-batch-42)`,
        },
      ],
      closingBalance: 0,
    },
    csv: csvOf([
      [...CSV_COLUMNS.statement],
      ['OPENING_BALANCE', '2025-01-01T00:00:00.000Z', 0, 'USD', '', '', '', ''],
      ['EARNED', at, 19.8, 'USD', sale.id, COMMISSION.id, '', `commission on sale ${sale.id}`],
      ['PAID_OUT', '2025-02-16T09:00:00.000Z', -19.8, 'USD', sale.id, COMMISSION.id, PAYOUT_ID, `payout ${PAYOUT_ID} (paypal-batch-42)`],
      ['CLOSING_BALANCE', '2025-03-01T00:00:00.000Z', 0, 'USD', '', '', '', ''],
    ]),
    error: { status: '400', message: 'from is required' },
  },
  getAffiliateReport: {
    query: { from: '2025-01-01T00:00:00.000Z', to: '2025-02-01T00:00:00.000Z' },
    response: [
      {
        affiliateId: AFFILIATE_ID,
        name: 'Jane Doe',
        email: 'jane@example.com',
        currency: 'USD',
        clicks: 412,
        referrals: 37,
        sales: 12,
        revenue: 1188,
        commissionEarned: 237.6,
        commissionPending: 217.8,
        commissionHeld: 0,
        commissionDue: 19.8,
        commissionPaid: 0,
        commissionVoided: 0,
      },
    ],
    csv: csvOf([
      [...CSV_COLUMNS.affiliateReport],
      [AFFILIATE_ID, 'Jane Doe', 'jane@example.com', 'USD', 412, 37, 12, 1188, 237.6, 217.8, 0, 19.8, 0, 0],
    ]),
    error: { status: '400', message: 'to: the period from `from` to `to` spans at most 366 days; ask for several reports to cover more' },
  },
  getProgramSummary: {
    query: { from: '2025-01-13T00:00:00.000Z', to: '2025-01-16T00:00:00.000Z' },
    response: {
      from: '2025-01-13T00:00:00.000Z',
      to: '2025-01-16T00:00:00.000Z',
      affiliates: {
        total: 42,
        created: 3,
        byStatus: [
          { status: 'PENDING', total: 2, created: 1 },
          { status: 'ACTIVE', total: 38, created: 2 },
          { status: 'REJECTED', total: 1, created: 0 },
          { status: 'DISABLED', total: 1, created: 0 },
        ],
        daily: [
          { day: '2025-01-13', created: 1 },
          { day: '2025-01-14', created: 0 },
          { day: '2025-01-15', created: 2 },
        ],
      },
      referrals: {
        total: 910,
        created: 37,
        daily: [
          { day: '2025-01-13', created: 11 },
          { day: '2025-01-14', created: 12 },
          { day: '2025-01-15', created: 14 },
        ],
      },
      sales: {
        count: 13,
        byCurrency: [
          {
            currency: 'USD',
            sales: 12,
            revenue: 1188,
            commission: 237.6,
            daily: [
              { day: '2025-01-13', sales: 4, revenue: 396, commission: 79.2 },
              { day: '2025-01-14', sales: 3, revenue: 297, commission: 59.4 },
              { day: '2025-01-15', sales: 5, revenue: 495, commission: 99 },
            ],
          },
          {
            currency: 'EUR',
            sales: 1,
            revenue: 49.99,
            commission: 10,
            daily: [
              { day: '2025-01-13', sales: 0, revenue: 0, commission: 0 },
              { day: '2025-01-14', sales: 1, revenue: 49.99, commission: 10 },
              { day: '2025-01-15', sales: 0, revenue: 0, commission: 0 },
            ],
          },
        ],
      },
    },
    error: { status: '400', message: 'to: must be after from', code: 'parameter_invalid', param: 'to' },
  },
  createWebhookEndpoint: {
    request: { url: 'https://hooks.example.com/affiliates', eventTypes: ['sale.*', 'affiliate.created'], description: 'Order system' },
    response: { ...endpoint, secret: SECRET },
    error: {
      status: '400',
      message:
        'eventTypes.0: unknown event type "sale.paid": use one of ' +
        PUBLIC_EVENT_TYPES.join(', ') +
        ', a family wildcard such as sale.*, or *',
      request: { url: 'https://hooks.example.com/affiliates', eventTypes: ['sale.paid'] },
    },
  },
  getWebhookEndpoints: { query: { id: ENDPOINT_ID }, response: endpoint, error: notFound(`No webhook endpoint with id ${UNKNOWN_ID}`) },
  updateWebhookEndpoint: {
    request: { webhookEndpointId: ENDPOINT_ID, rotateSecret: true },
    response: {
      ...endpoint,
      secret: 'whsec_Q2hhbmdlZFNlY3JldEZvckV4YW1wbGU1',
      previousSecretExpiresAt: '2025-01-16T10:31:00.000Z',
      updatedAt: later,
    },
    error: notFound(`No webhook endpoint with id ${UNKNOWN_ID}`),
  },
  deleteWebhookEndpoint: {
    request: { webhookEndpointId: ENDPOINT_ID },
    response: deleted(ENDPOINT_ID),
    error: notFound(`No webhook endpoint with id ${UNKNOWN_ID}`),
  },
  getWebhookEndpointSecret: {
    query: { webhookEndpointId: ENDPOINT_ID },
    response: { webhookEndpointId: ENDPOINT_ID, secret: SECRET, previousSecretExpiresAt: null },
    error: { status: '403', message: lacksScope('webhook_secrets', 'GET', '/api/v1/webhook-endpoints/secret') },
  },
  getWebhookDeliveries: {
    query: { endpointId: ENDPOINT_ID, status: 'failed' },
    response: [
      {
        ...delivery,
        status: 'failed',
        attempts: [{ ...attempt, statusCode: 500, responseExcerpt: 'Internal Server Error', responseBytes: 21 }],
        nextAttemptAt: '2025-01-15T10:35:00.000Z',
      },
    ],
    error: { status: '400', message: "status: Invalid enum value. Expected 'pending' | 'succeeded' | 'failed', received 'error'" },
  },
  retryWebhookDelivery: {
    request: { deliveryId: DELIVERY_ID },
    response: {
      ...delivery,
      attempts: [
        { ...attempt, statusCode: 500, responseExcerpt: 'Internal Server Error', responseBytes: 21 },
        { ...attempt, at: later },
      ],
      updatedAt: later,
    },
    error: notFound(`No webhook delivery with id ${UNKNOWN_ID}`),
  },
  testWebhookEndpoint: {
    request: { webhookEndpointId: ENDPOINT_ID },
    response: { ...attempt, succeeded: true, webhookId: '1c9e7a52-4b3d-4f6e-8a21-7d5c3b9e0f44' },
    error: notFound(`No webhook endpoint with id ${UNKNOWN_ID}`),
  },
  recoverWebhookDeliveries: {
    request: { webhookEndpointId: ENDPOINT_ID, since: '2025-01-15T00:00:00.000Z' },
    response: { recovered: 14 },
    error: { status: '400', message: 'since is required', request: { webhookEndpointId: ENDPOINT_ID } },
  },
  getEvents: {
    response: [examplePayloadOf('sale.created')],
    error: { status: '400', message: 'createdAt[gte] must be before createdAt[lt]', param: 'createdAt[gte]' },
  },
  replayWebhookDeliveries: {
    request: {
      webhookEndpointId: ENDPOINT_ID,
      since: '2025-01-15T00:00:00.000Z',
      until: '2025-01-16T00:00:00.000Z',
      eventTypes: ['sale.created'],
      includeSucceeded: false,
    },
    response: { queued: 14 },
    error: { status: '400', message: 'since must be before until' },
  },
  verifyWebhook: {
    request: {
      webhookEndpointId: ENDPOINT_ID,
      headers: {
        'webhook-id': world.EVENT_ID,
        'webhook-timestamp': '1736937000',
        'webhook-signature': 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
      },
      body: JSON.stringify(examplePayloadOf('sale.created')),
    },
    response: { valid: false, failure: 'BODY_ALTERED' },
    error: notFound(`No webhook endpoint with id ${UNKNOWN_ID}`),
  },
  getEventTypes: {
    response: [
      {
        type: 'sale.created',
        description: EVENT_CATALOGUE['sale.created'].firesWhen,
        // The JSON Schema in full is long (every field of the sale): the example shows its head.
        schema: { $schema: 'https://json-schema.org/draft/2020-12/schema', title: 'sale.created webhook', type: 'object' },
        example: examplePayloadOf('sale.created'),
      },
    ],
    error: { status: '401', message: 'Invalid API key: it is unknown or has been revoked' },
  },
  getAuditRecords: {
    query: { limit: 50 },
    response: [
      {
        id: AUDIT_RECORD_ID,
        at,
        actor: { apiKeyId: API_KEY_ID, apiKeyPrefix: 'ak_live_3xKq' },
        action: 'bank_details.exported',
        operation: 'GET /api/v1/payouts/export',
        status: 200,
        aborted: false,
        requestId: '5d1c7b2e-9f3a-4e8b-a6c4-2b7e9d0f1a3c',
      },
    ],
    error: { status: '400', message: 'limit: Number must be less than or equal to 1000' },
  },
  getOwnProgram: { response: program, error: { status: '401', message: 'Invalid API key: it is unknown or has been revoked' } },
  updateOwnProgram: {
    request: { allowedOrigins: ['https://shop.example.com'], attributionWindowDays: 30, attributionModel: 'FIRST_CLICK' },
    response: { ...program, updatedAt: later },
    error: {
      status: '400',
      message:
        'allowedOrigins.0: must be an exact origin such as https://shop.example.com (scheme, host and optional port; no path, no trailing slash)',
      request: { allowedOrigins: ['https://shop.example.com/'] },
    },
  },
  getPublishableKeys: {
    response: [publishableKey],
    error: { status: '401', message: 'Invalid API key: it is unknown or has been revoked' },
  },
  createPublishableKey: {
    response: publishableKey,
    error: { status: '403', message: lacksScope('write', 'POST', '/api/v1/publishable-keys') },
  },
  revokePublishableKey: {
    request: { publishableKeyId: PUBLISHABLE_KEY_ID },
    response: revoked(PUBLISHABLE_KEY_ID),
    error: notFound(`No publishable key with id ${UNKNOWN_ID}`),
  },
  createAffiliatePortalSession: {
    request: { affiliateId: AFFILIATE_ID, returnUrl: 'https://shop.example.com/account' },
    response: {
      id: PORTAL_SESSION_ID,
      affiliateId: AFFILIATE_ID,
      url: 'https://affiliates.example.com/portal/open/Yk3v9QmZ1rT8wX2cN4bH7jL0pS6uA2eD5gF8iK1mO3q',
      expiresAt: '2025-01-15T10:40:00.000Z',
      returnUrl: 'https://shop.example.com/account',
    },
    error: {
      status: '400',
      message: `Affiliate ${AFFILIATE_ID} is PENDING: only an ACTIVE affiliate can open the affiliate portal`,
      code: 'affiliate_not_active',
      param: 'affiliateId',
    },
  },
  revokeAffiliatePortalSessions: {
    request: { affiliateId: AFFILIATE_ID },
    response: { revoked: 1 },
    error: { status: '400', message: 'send exactly one of affiliatePortalSessionId and affiliateId', request: {} },
  },
  recordBrowserClick: {
    request: { link: 'jane', visitorId: 'v_2f8a9c1e7b', landingUrl: 'https://shop.example.com/?ref=jane' },
    response: { clickId: 1042, counted: true, reason: null, attributionWindowDays: 30, attributionModel: 'FIRST_CLICK' },
    error: {
      status: '403',
      message:
        "The origin https://evil.example.net is not allowed to use this program's publishable keys: add it to allowedOrigins (PUT /api/v1/program)",
    },
  },
  createBrowserReferral: {
    request: { clickId: 1042, email: 'customer@example.com', name: 'Sam Customer', externalId: 'user_8812' },
    response: { ok: true, referralId: referral.id },
    error: { status: '400', message: 'clickId or visitorId is required', request: { email: 'customer@example.com' } },
  },
  getStripeIntegration: { response: stripe, error: { status: '401', message: 'Invalid API key: it is unknown or has been revoked' } },
  configureStripeIntegration: {
    request: { webhookSecret: 'whsec_5tr1peS1gn1ngSecretx9Qa' },
    response: stripe,
    error: {
      status: '400',
      message: 'webhookSecret: must be the signing secret of a Stripe webhook endpoint (whsec_…), as the Stripe dashboard shows it',
      request: { webhookSecret: 'sk_live_oops' },
    },
  },
  signIn: {
    request: { email: 'ada@example.com', password: 'correct horse battery staple' },
    response: teamSession,
    error: { status: '401', message: 'Wrong email or password', code: 'credentials_invalid' },
  },
  getTeamSession: {
    response: teamSession,
    error: {
      status: '401',
      message: 'No console session: sign in (a session ends after a while without activity, and on sign-out)',
      code: 'unauthenticated',
    },
  },
  signOut: {
    response: { signedOut: true },
    error: { status: '403', message: 'Missing or wrong X-CSRF-Token: reload the console and try again', code: 'csrf_token_invalid' },
  },
  acceptTeamInvite: {
    request: { token: INVITE_TOKEN, password: 'correct horse battery staple' },
    response: teamSession,
    error: {
      status: '410',
      message: 'This invite link has already been used: each link works once. Ask an OWNER for a new one',
      code: 'invite_used',
    },
  },
  getTeamMembers: {
    response: { members: [teamMember], invites: [teamInvite] },
    error: {
      status: '401',
      message: 'No console session: sign in (a session ends after a while without activity, and on sign-out)',
      code: 'unauthenticated',
    },
  },
  inviteTeamMember: {
    request: { email: 'grace@example.com', role: 'FINANCE' },
    response: { invite: teamInvite, inviteUrl: `https://affiliates.example.com/console/#/accept-invite?token=${INVITE_TOKEN}` },
    error: {
      status: '403',
      message: 'Your role ADMIN cannot POST /api/v1/team/members: only an OWNER manages members and keys',
      code: 'role_forbidden',
    },
  },
  changeTeamMemberRole: {
    request: { id: MEMBER_ID, role: 'ADMIN' },
    response: { ...teamMember, role: 'ADMIN' },
    error: { status: '409', message: 'The program must keep at least one OWNER: make another member OWNER first', code: 'last_owner' },
  },
  removeTeamMember: {
    request: { id: MEMBER_ID },
    response: { id: MEMBER_ID, deleted: true },
    error: { status: '409', message: 'The program must keep at least one OWNER: make another member OWNER first', code: 'last_owner' },
  },
  startTotpEnrolment: {
    response: {
      secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP',
      otpauthUrl:
        'otpauth://totp/Affiliate%20console:ada%40example.com?issuer=Affiliate%20console&secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&algorithm=SHA1&digits=6&period=30',
    },
    error: { status: '403', message: 'Missing or wrong X-CSRF-Token: reload the console and try again', code: 'csrf_token_invalid' },
  },
  confirmTotp: {
    request: { code: '492039' },
    response: { totpEnabled: true },
    error: { status: '400', message: 'code: must be the 6 digits of the authenticator app', request: { code: '4920' } },
  },
  disableTotp: {
    request: { code: '492039' },
    response: { totpEnabled: false },
    error: { status: '400', message: "code: not the authenticator app's current code", code: 'totp_invalid', param: 'code' },
  },
  getOwnApiKeys: {
    response: [apiKeySummary],
    error: {
      status: '403',
      message: 'Your role ADMIN cannot GET /api/v1/api-keys: only an OWNER manages members and keys',
      code: 'role_forbidden',
    },
  },
  createOwnApiKey: apiKeyCreation,
  revokeOwnApiKey: {
    request: { id: API_KEY_ID },
    response: revoked(API_KEY_ID),
    error: notFound(`No API key with id ${UNKNOWN_ID} in this program`),
  },
  inviteProgramMember: {
    path: { id: PROGRAM_ID },
    request: { email: 'ada@example.com', role: 'OWNER' },
    response: {
      invite: { ...teamInvite, email: 'ada@example.com', role: 'OWNER' },
      inviteUrl: `https://affiliates.example.com/console/#/accept-invite?token=${INVITE_TOKEN}`,
    },
    error: { status: '409', message: 'ada@example.com is already a team member; change their role instead', code: 'member_exists' },
  },
  listProgramMembers: {
    path: { id: PROGRAM_ID },
    response: { members: [teamMember], invites: [teamInvite] },
    error: notFound(`No program with id ${UNKNOWN_ID}`),
  },
  createProgram: {
    request: { name: 'Acme', destinationUrls: [{ url: 'https://shop.example.com/' }], defaultCommissionRate: 20 },
    response: program,
    error: { status: '400', message: 'name is required', request: { defaultCommissionRate: 20 } },
  },
  listPrograms: {
    query: { limit: 20 },
    response: [program],
    error: { status: '401', message: 'Missing or invalid admin token: send "Authorization: Bearer <ADMIN_TOKEN>"' },
  },
  getProgram: { path: { id: PROGRAM_ID }, response: program, error: notFound(`No program with id ${UNKNOWN_ID}`) },
  updateProgram: {
    path: { id: PROGRAM_ID },
    request: { rateLimit: { points: 200, duration: 1 }, maxWebhookEndpoints: 40 },
    response: { ...program, rateLimit: { points: 200, duration: 1 }, maxWebhookEndpoints: 40, updatedAt: later },
    error: notFound(`No program with id ${UNKNOWN_ID}`),
  },
  deleteProgram: { path: { id: PROGRAM_ID }, response: deleted(PROGRAM_ID), error: notFound(`No program with id ${UNKNOWN_ID}`) },
  createApiKey: { path: { id: PROGRAM_ID }, ...apiKeyCreation },
  listApiKeys: { path: { id: PROGRAM_ID }, response: [apiKeySummary], error: notFound(`No program with id ${UNKNOWN_ID}`) },
  revokeApiKey: { path: { id: API_KEY_ID }, response: revoked(API_KEY_ID), error: notFound(`No API key with id ${UNKNOWN_ID}`) },
  adminCreatePublishableKey: { path: { id: PROGRAM_ID }, response: publishableKey, error: notFound(`No program with id ${UNKNOWN_ID}`) },
  adminListPublishableKeys: { path: { id: PROGRAM_ID }, response: [publishableKey], error: notFound(`No program with id ${UNKNOWN_ID}`) },
  adminRevokePublishableKey: {
    path: { id: PUBLISHABLE_KEY_ID },
    response: revoked(PUBLISHABLE_KEY_ID),
    error: notFound(`No publishable key with id ${UNKNOWN_ID}`),
  },
  listAuditRecords: {
    query: { limit: 50 },
    response: [
      {
        id: AUDIT_RECORD_ID,
        at,
        actor: { credential: 'admin-token', address: '198.51.100.23', userAgent: 'curl/8.5.0', user: null },
        action: 'POST /admin/v1/programs/{id}/api-keys',
        targetId: PROGRAM_ID,
        status: 200,
        requestId: '5d1c7b2e-9f3a-4e8b-a6c4-2b7e9d0f1a3c',
        count: 1,
        lastAt: at,
      },
    ],
    error: { status: '401', message: 'Missing or invalid admin token: send "Authorization: Bearer <ADMIN_TOKEN>"' },
  },
  receiveStripeWebhook: {
    path: { programId: PROGRAM_ID },
    request: {
      id: 'evt_1NxExample',
      object: 'event',
      type: 'invoice.paid',
      api_version: '2025-03-31.basil',
      created: 1736937000,
      data: { object: { id: 'in_1NxExample', object: 'invoice', customer: 'cus_Example', amount_paid: 9900, currency: 'usd' } },
    },
    response: { received: true, outcome: 'processed' },
    error: {
      status: '400',
      message: 'Stripe-Signature header missing: only Stripe, signing with the secret stored for this program, can post here',
      code: 'signature_invalid',
    },
  },
  getSignupPage: {
    path: { slug: 'acme' },
    response:
      '<!doctype html><html lang="en"><head><title>Join Acme</title></head><body><main><h1>Join Acme</h1><form method="post">…</form></main></body></html>',
    error: { status: '404', message: 'No sign-up page at /join/acmee' },
  },
  applyToProgram: {
    path: { slug: 'acme' },
    request: { firstName: 'Jane', lastName: 'Doe', email: 'jane@example.com', answers: { channel: 'A cooking blog' } },
    status: '201',
    response: { status: 'PENDING' },
    // The hosted page's form (gateway/src/signup/page.ts): the token it was served with, and the honeypot left empty.
    form: {
      firstName: 'Jane',
      lastName: 'Doe',
      email: 'jane@example.com',
      'answers[channel]': 'A cooking blog',
      formToken: '1736937000.Zm9ybVRva2VuT2ZUaGVIb3N0ZWRQYWdlRXhhbXBsZTE',
      website: '',
    },
    page: {
      status: '200',
      html: '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Application sent: Acme</title></head><body><main><div role="status"><h1>Application received</h1><p>Thank you: your application to Acme is waiting for review. You will hear from us once it has been approved.</p></div></main></body></html>',
    },
    error: { status: '400', message: 'email is required', request: { firstName: 'Jane', lastName: 'Doe' } },
  },
};

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const METHODS = ['get', 'post', 'put', 'delete'] as const;

/** The service behind a public path, as its 503 names it. */
function serviceOf(path: string): string | null {
  const route = path.replace(/^\/api\/v1/, '');
  if (/^\/(coupons|promotional-codes)/.test(route)) return 'coupon';
  if (/^\/(affiliates\/statement|sales|payouts|commissions(\/|$)|reports)/.test(route)) return 'sale';
  if (/^\/(affiliates|links|clicks|commission-plans)/.test(route)) return 'affiliate';
  if (/^\/referrals/.test(route)) return 'referral';
  if (/^\/(webhook-|event-types)/.test(route)) return 'webhook-dispatcher';
  return null;
}

/** What the gateway answers with each status when it is not the operation's own refusal: the messages of gateway/src and the platform. */
function commonErrorMessage(status: string, method: string, path: string, operation: Json): string | null {
  const credential = credentialOf(operation);
  // Stripe's webhooks and the sign-up page have refusals of their own: only their main one is shown.
  if (credential === 'none') return null;
  const admin = credential === 'adminToken';
  const scopes: string[] = operation['x-required-scopes'] ?? [];
  const takesQuery = (operation.parameters ?? []).some((parameter: Json) => parameter.in === 'query');
  switch (status) {
    case '400':
      return operation.requestBody ? 'Request body is not valid JSON' : takesQuery ? 'Unknown field in query: foo' : null;
    case '401':
      return admin
        ? 'Missing or invalid admin token: send "Authorization: Bearer <ADMIN_TOKEN>"'
        : 'Invalid API key: it is unknown or has been revoked';
    case '403':
      if (scopes.length > 0) return lacksScope(scopes[0]!, method.toUpperCase(), path);
      return credential === 'publishableKey'
        ? 'The browser routes take a publishable key (pk_…): a secret API key must never be sent from a web page'
        : 'API access is not enabled for this program';
    case '404':
      return admin ? `No program with id ${UNKNOWN_ID}` : 'The program of this API key no longer exists';
    case '409':
      return operation.parameters?.some((parameter: Json) => parameter.name === 'idempotency-key')
        ? 'This Idempotency-Key was already used with a different request; use a new key for a new request'
        : null;
    case '413':
      return 'Request body is too large';
    case '415':
      return 'Content-Type must be application/json; the body was sent as text/plain';
    case '429':
      return admin
        ? null
        : `Rate limit exceeded: at most 100 requests per 1 s for this API key on ${method.toUpperCase()} ${path}; retry after 1 s`;
    case '503': {
      const service = serviceOf(path);
      return service ? `The ${service} service is unavailable; retry later` : null;
    }
    default:
      return null;
  }
}

/** The request id every example error carries (the gateway makes a UUID; a client may send its own). */
const EXAMPLE_REQUEST_ID = '5d1c7b2e-9f3a-4e8b-a6c4-2b7e9d0f1a3c';

/**
 * The code the platform answers a message with, where the example does not name it: the platform's
 * sentences for a missing, unknown or malformed field and the gateway's own refusals (contracts/src/errors.ts).
 */
const EXAMPLE_CODES: Record<string, [RegExp, ErrorCode][]> = {
  '400': [
    [/^Unknown fields? in /, 'parameter_unknown'],
    [/^Request body /, 'body_malformed'],
    [/ is required\b/, 'parameter_missing'],
  ],
  '401': [[/^Invalid API key/, 'api_key_invalid']],
  '403': [
    [/lacks the .* scope/, 'scope_missing'],
    [/^The origin /, 'origin_not_allowed'],
    [/publishable key|secret API key/, 'key_type_not_allowed'],
    [/^API access is not enabled/, 'api_access_disabled'],
  ],
  '404': [[/^The program of this API key/, 'program_missing']],
  '409': [[/Idempotency-Key was already used/, 'idempotency_key_reused']],
  '429': [[/^Too many heavy operations/, 'heavy_operations_limited']],
};
const exampleCodeOf = (status: string, message: string): ErrorCode =>
  (EXAMPLE_CODES[status] ?? []).find(([pattern]) => pattern.test(message))?.[1] ?? defaultErrorCodeOf(Number(status));

/** The field a platform sentence names first (`name is required`, `limit: …`, `Unknown field in body: x`), as the error's `param`. */
function exampleParamOf(message: string): string | undefined {
  return (
    /^Unknown fields? in (?:body|query): ([\w.]+)$/.exec(message)?.[1] ?? /^([a-zA-Z][\w.]*)(?:: | is required| must )/.exec(message)?.[1]
  );
}

/** An error body in the shape the response documents: `{ error }`, or `{ error: <status>, message }` where the specification numbers it, with its code, param and requestId. */
function errorBodyOf(response: Json, status: string, message: string, coded: { code?: ErrorCode; param?: string } = {}): unknown {
  const ref: string | undefined = response.content?.['application/json']?.schema?.$ref;
  const param = coded.param ?? exampleParamOf(message);
  const details = { code: coded.code ?? exampleCodeOf(status, message), ...(param ? { param } : {}), requestId: EXAMPLE_REQUEST_ID };
  return ref?.endsWith('/NumberedError') ? { error: Number(status), message, ...details } : { error: message, ...details };
}

/**
 * Puts each operation's examples into the document beside its schemas, every error with a body
 * its message, and the code samples written from them (`x-codeSamples`). An operation without an
 * example is left as it is: the examples test names it.
 */
export function addOperationExamples(document: { paths?: Json }): void {
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = (item as Json)[method] as Json | undefined;
      const example = operation && OPERATION_EXAMPLES[operation.operationId as string];
      if (!operation || !example) continue;
      const requestContent = operation.requestBody?.content?.['application/json'];
      if (requestContent && example.request !== undefined) requestContent.example = example.request;
      const formContent = operation.requestBody?.content?.['application/x-www-form-urlencoded'];
      if (formContent && example.form) formContent.example = example.form;
      const pageContent = example.page && operation.responses?.[example.page.status]?.content?.['text/html'];
      if (pageContent && example.page) pageContent.example = example.page.html;
      const success = operation.responses?.[example.status ?? '200']?.content ?? {};
      for (const [type, media] of Object.entries(success as Json)) {
        // A list that also answers CSV shows both: its JSON, and the same objects as the CSV rows.
        if (typeof example.response === 'string') {
          if (type !== 'application/json') (media as Json).example = example.response;
        } else if (type === 'application/json') (media as Json).example = example.response;
        else if (type === 'text/csv' && example.csv !== undefined) (media as Json).example = example.csv;
      }
      for (const [status, response] of Object.entries(operation.responses as Json)) {
        if (!/^[45]/.test(status)) continue;
        const own = status === example.error.status;
        const message = own ? example.error.message : commonErrorMessage(status, method, path, operation);
        if (message === null) continue;
        const content = (response as Json).content ?? {};
        if (content['application/json'])
          content['application/json'].example = errorBodyOf(response as Json, status, message, own ? example.error : {});
        else if (content['text/html'])
          content['text/html'].example =
            `<!doctype html><html lang="en"><head><title>Not found</title></head><body><main><p>${message}</p></main></body></html>`;
      }
      operation['x-codeSamples'] = codeSamplesOf(
        {
          method,
          path,
          credential: credentialOf(operation),
          idempotent: (operation.parameters ?? []).some((parameter: Json) => parameter.name === 'idempotency-key'),
          text: !success['application/json'],
          ...(operation.operationId === 'receiveStripeWebhook'
            ? { headers: { 'Stripe-Signature': 't=1736937000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd' } }
            : {}),
          ...(credentialOf(operation) === 'publishableKey' ? { headers: { Origin: 'https://shop.example.com' } } : {}),
          ...(isConsoleSession(operation) ? { headers: consoleSessionHeaders(method) } : {}),
        },
        example,
      );
    }
  }
}

const isConsoleSession = (operation: Json) => Object.keys((operation.security as Json[] | undefined)?.[0] ?? {})[0] === 'consoleSession';

/** A console session's request as the console's page sends it: the cookie, and on a write the CSRF token and the page's origin. */
const consoleSessionHeaders = (method: string): Record<string, string> => ({
  Cookie: '__Host-affiliate_console_session=<session cookie>',
  ...(method === 'get' ? {} : { 'X-CSRF-Token': '<csrfToken of GET /api/v1/team/session>', Origin: 'https://affiliates.example.com' }),
});

function credentialOf(operation: Json): SampledOperation['credential'] {
  const scheme = Object.keys((operation.security as Json[] | undefined)?.[0] ?? {})[0];
  return scheme === 'bearerAuth'
    ? 'apiKey'
    : scheme === 'adminToken'
      ? 'adminToken'
      : scheme === 'publishableKey'
        ? 'publishableKey'
        : 'none';
}
