// Generated from the OpenAPI document by scripts/generate-operations.mjs (npm run generate); do not edit.

/** The document's info.version: the package's version follows it. */
export const API_VERSION = '1.0.0';

/** Each resource of the public API: its path, its methods, whether its GET answers a list, and whether that list pages (Link header, startingAfter). */
export const RESOURCES = {
  coupons: { path: '/api/v1/coupons', methods: ['get', 'post', 'put', 'delete'], list: true, paged: true },
  promotionalCodes: { path: '/api/v1/promotional-codes', methods: ['get', 'post', 'put', 'delete'], list: true, paged: true },
  affiliates: { path: '/api/v1/affiliates', methods: ['get', 'post', 'put', 'delete'], list: true, paged: true },
  links: { path: '/api/v1/links', methods: ['get', 'post', 'put', 'delete'], list: true, paged: true },
  clicks: { path: '/api/v1/clicks', methods: ['post'], list: false, paged: false },
  referrals: { path: '/api/v1/referrals', methods: ['get', 'post', 'put', 'delete'], list: true, paged: true },
  sales: { path: '/api/v1/sales', methods: ['get', 'post', 'put', 'delete'], list: true, paged: true },
  commissionPlans: { path: '/api/v1/commission-plans', methods: ['get', 'post', 'put', 'delete'], list: true, paged: true },
  payouts: { path: '/api/v1/payouts', methods: ['get', 'post', 'put'], list: true, paged: true },
  commissions: { path: '/api/v1/commissions', methods: ['get'], list: true, paged: true },
  affiliateReports: { path: '/api/v1/reports/affiliates', methods: ['get'], list: true, paged: false },
  webhookEndpoints: { path: '/api/v1/webhook-endpoints', methods: ['get', 'post', 'put', 'delete'], list: true, paged: true },
  webhookDeliveries: { path: '/api/v1/webhook-deliveries', methods: ['get'], list: true, paged: true },
  events: { path: '/api/v1/events', methods: ['get'], list: true, paged: true },
  eventTypes: { path: '/api/v1/event-types', methods: ['get'], list: true, paged: false },
  auditRecords: { path: '/api/v1/audit-records', methods: ['get'], list: true, paged: true },
  program: { path: '/api/v1/program', methods: ['get', 'put'], list: false, paged: false },
  publishableKeys: { path: '/api/v1/publishable-keys', methods: ['get', 'post', 'delete'], list: true, paged: false },
  affiliatePortalSessions: { path: '/api/v1/affiliate-portal-sessions', methods: ['post', 'delete'], list: false, paged: false },
} as const;
