import { API_OPERATIONS } from '@affiliate/contracts';

export const PUBLIC_PREFIX = '/api/v1';

export const UPSTREAM_NAMES = ['coupon', 'affiliate', 'referral', 'sale', 'webhook-dispatcher'] as const;
export type UpstreamName = (typeof UPSTREAM_NAMES)[number];

/** DESIGN.md §1: the first path segment under /api/v1 names the service that owns the resource. */
export const ROUTE_TABLE: Record<string, UpstreamName> = {
  coupons: 'coupon',
  'promotional-codes': 'coupon',
  affiliates: 'affiliate',
  links: 'affiliate',
  clicks: 'affiliate',
  'commission-plans': 'affiliate',
  referrals: 'referral',
  sales: 'sale',
  payouts: 'sale',
  commissions: 'sale',
  reports: 'sale',
  integrations: 'sale',
  'webhook-endpoints': 'webhook-dispatcher',
  'webhook-deliveries': 'webhook-dispatcher',
  'event-types': 'webhook-dispatcher',
  events: 'webhook-dispatcher',
};

/**
 * Paths under another service's segment that belong to the sale service: a statement is money
 * (DESIGN.md §9, commissions, payouts and statements belong to the sale service), though it is read
 * per affiliate.
 */
export const NESTED_ROUTES: Record<string, UpstreamName> = { 'affiliates/statement': 'sale' };

/**
 * Public paths the gateway answers itself: the program of the key (its settings, its publishable
 * keys), and the browser routes, which it checks and rewrites before forwarding them to a service.
 */
export const GATEWAY_ROUTES: Record<string, string> = {
  program: 'gateway/src/program-api/routes.ts',
  'publishable-keys': 'gateway/src/program-api/routes.ts',
  'audit-records': 'gateway/src/program-api/routes.ts',
  browser: 'gateway/src/browser/browser-routes.ts',
  'affiliate-portal-sessions': 'gateway/src/program-api/routes.ts',
  team: 'gateway/src/team/team-routes.ts',
  'api-keys': 'gateway/src/team/team-routes.ts',
};

// Plain segments only: no dot segments or percent-encoding that an upstream could resolve differently.
const SAFE_PATH = /^(\/[A-Za-z0-9_-]+)+\/?$/;

export type Route = { upstream: UpstreamName; path: string };

const KNOWN_OPERATION_PATHS = new Set(API_OPERATIONS.filter((operation) => !operation.admin).map((operation) => operation.path));

/** The metrics label of a public path: the operation's own path, or one label for everything else (bounded cardinality). */
export function metricsRouteOf(path: string): string {
  const trimmed = path.length > 1 ? path.replace(/\/$/, '') : path;
  return KNOWN_OPERATION_PATHS.has(trimmed) ? `${PUBLIC_PREFIX}${trimmed}` : `${PUBLIC_PREFIX}/unmatched`;
}

/**
 * The upstream of a public path (already stripped of /api/v1), or null. Service-to-service routes
 * (`/internal/...`) are never reachable from outside, wherever the segment appears.
 */
export function routeOf(path: string): Route | null {
  if (!SAFE_PATH.test(path)) return null;
  const segments = path.split('/').filter(Boolean);
  if (segments.some((segment) => segment.toLowerCase() === 'internal')) return null;
  const nested = segments.slice(0, 2).join('/');
  const upstream = Object.hasOwn(NESTED_ROUTES, nested)
    ? NESTED_ROUTES[nested]
    : Object.hasOwn(ROUTE_TABLE, segments[0] ?? '')
      ? ROUTE_TABLE[segments[0] as string]
      : undefined;
  if (!upstream) return null;
  return { upstream, path: `/${segments.join('/')}` };
}
