import {
  baseConfigShape,
  ConfigError,
  DEFAULT_PORTS,
  parseConfig,
  type ComponentName,
  type SecretSettings,
  serviceDatabaseUrl,
} from '@affiliate/platform';
import { TeamPassword } from '@affiliate/contracts';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import type { UpstreamName } from './proxy/route-table';
import { upstreamUrls } from './proxy/upstream-targets';

/** An unset variable and an empty one mean the same: docker compose passes `REDIS_URL=` through. */
const optional = <Schema extends z.ZodTypeAny>(schema: Schema) =>
  z.preprocess((value) => (value === '' ? undefined : value), schema.optional());

/**
 * The gateway's own version of the platform's serviceUrlSetting (same name, so deploy/test reads
 * the services it calls the same way): one URL, or the URLs of the service's replicas separated by
 * commas, which the gateway calls in turn (proxy/upstream-targets.ts).
 */
const serviceUrlSetting = (component: ComponentName) =>
  z
    .string()
    .default(`http://127.0.0.1:${DEFAULT_PORTS[component]}`)
    .refine(
      (setting) => upstreamUrls(setting).length > 0 && upstreamUrls(setting).every((url) => z.string().url().safeParse(url).success),
      {
        message: 'must be a URL, or URLs separated by commas',
      },
    );

/** The gateway's metrics listener (the OpenTelemetry Prometheus exporter's customary port). */
export const GATEWAY_METRICS_PORT = 9464;

export const gatewayConfigShape = {
  ...baseConfigShape,
  PORT: z.coerce.number().int().min(0).max(65535).default(DEFAULT_PORTS.gateway),
  /** Prometheus scrapes here, never on the public port. */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(GATEWAY_METRICS_PORT),
  ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').default('local-admin-token-change-me'),
  REDIS_URL: optional(z.string().regex(/^rediss?:\/\//, 'must be a redis:// URL')),
  BOOTSTRAP_API_KEY: optional(z.string().min(16, 'must be at least 16 characters').max(200).regex(/^\S+$/, 'must not contain spaces')),
  /** The demo program's OWNER, who signs in to the console: both or neither, and only with BOOTSTRAP_API_KEY. */
  BOOTSTRAP_OWNER_EMAIL: optional(z.string().trim().toLowerCase().max(254).email('must be an email address')),
  /** The console's own password rule (12 to 128 characters), as a member choosing one on an invite. */
  BOOTSTRAP_OWNER_PASSWORD: optional(TeamPassword),
  COUPON_URL: serviceUrlSetting('coupon'),
  AFFILIATE_URL: serviceUrlSetting('affiliate'),
  REFERRAL_URL: serviceUrlSetting('referral'),
  SALE_URL: serviceUrlSetting('sale'),
  WEBHOOK_DISPATCHER_URL: serviceUrlSetting('webhook-dispatcher'),
  RATE_LIMIT_POINTS: z.coerce.number().int().min(1).default(100),
  RATE_LIMIT_DURATION_SECONDS: z.coerce.number().int().min(1).max(86_400).default(1),
  /** Requests failing authentication, per client address (then 429 instead of 401). */
  UNAUTHENTICATED_RATE_LIMIT_POINTS: z.coerce.number().int().min(1).default(60),
  UNAUTHENTICATED_RATE_LIMIT_DURATION_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60),
  /** Requests to routes that need no credential (readiness, docs, console, unknown paths), per client address. */
  ANONYMOUS_RATE_LIMIT_POINTS: z.coerce.number().int().min(1).default(300),
  ANONYMOUS_RATE_LIMIT_DURATION_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60),
  /** Browser calls (publishable keys) per key and client address. */
  BROWSER_RATE_LIMIT_POINTS: z.coerce.number().int().min(1).default(120),
  BROWSER_RATE_LIMIT_DURATION_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60),
  /** Sign-up submissions (POST /join/{slug}) per program and client address: a flood of applications stops here. */
  SIGNUP_RATE_LIMIT_POINTS: z.coerce.number().int().min(1).default(10),
  SIGNUP_RATE_LIMIT_DURATION_SECONDS: z.coerce.number().int().min(1).max(86_400).default(3600),
  /** Wrong admin tokens per client address before that address is locked out of /admin/v1 for the window. */
  ADMIN_FAILED_AUTH_LIMIT: z.coerce.number().int().min(1).default(10),
  ADMIN_FAILED_AUTH_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900),
  /** express "trust proxy": false (the socket address is the client), a hop count, or addresses of trusted proxies. */
  TRUST_PROXY: z
    .string()
    .default('false')
    .transform((value) => (value === 'false' ? false : value === 'true' ? true : /^\d+$/.test(value) ? Number(value) : value))
    .refine((value) => typeof value !== 'string' || trustedProxyEntries(value).every(isAddressOrRange), {
      message:
        "must be false, true, a hop count, or comma-separated addresses and CIDR ranges (e.g. 10.244.0.0/16, the ingress controller's pod range) of the proxies in front of the gateway",
    }),
  /** Days the audit records (the operators' and each program's) are kept. */
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(365),
  UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /** Connections to each service, shared by every program (programs take turns for them). */
  UPSTREAM_MAX_SOCKETS: z.coerce.number().int().min(1).max(10_000).default(256),
  /** Requests one program may have in flight to one service; beyond it 503 with Retry-After. Well below the pool. */
  UPSTREAM_MAX_IN_FLIGHT_PER_PROGRAM: z.coerce.number().int().min(1).max(10_000).default(64),
  BODY_LIMIT: z
    .string()
    .regex(/^\d+(b|kb|mb)$/i, 'must be a size such as 1mb')
    .default('1mb'),
  /** How long an affiliate portal link can be opened (issue 30: 10 minutes); tests shorten it. */
  PORTAL_LINK_TTL_SECONDS: z.coerce.number().int().min(1).max(3600).default(600),
  /** A console session ends after this long without a request (sliding), and at the latest TEAM_SESSION_HOURS after sign-in. */
  TEAM_SESSION_IDLE_MINUTES: z.coerce.number().int().min(1).max(1440).default(30),
  TEAM_SESSION_HOURS: z.coerce.number().int().min(1).max(720).default(12),
  /** Failed console sign-ins per email, and per client address, in TEAM_LOGIN_WINDOW_SECONDS; past either every attempt is 429. */
  TEAM_LOGIN_ACCOUNT_FAILURES: z.coerce.number().int().min(1).default(10),
  TEAM_LOGIN_ADDRESS_FAILURES: z.coerce.number().int().min(1).default(50),
  TEAM_LOGIN_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900),
};

export type RateLimit = { points: number; duration: number };

/** proxy-addr's names for ranges (express accepts them too), besides literal addresses and CIDRs. */
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);
const trustedProxyEntries = (value: string) => value.split(',').map((entry) => entry.trim());
const isAddressOrRange = (entry: string) => NAMED_RANGES.has(entry) || ipaddr.isValid(entry) || ipaddr.isValidCIDR(entry);

/** The widest range production trusts: a whole private range at most (deploy's pre-apply check asks /16). */
const WIDEST_TRUSTED_PREFIX = 8;

/** An entry wider than /8, counted in IPv4 bits for a range of IPv4-mapped addresses (::ffff:0:0/96 is every IPv4 client). */
function isCatchAll(entry: string): boolean {
  if (!ipaddr.isValidCIDR(entry)) return false;
  const [address, prefix] = ipaddr.parseCIDR(entry);
  if (address.kind() === 'ipv4') return prefix < WIDEST_TRUSTED_PREFIX;
  const mapped = ipaddr.IPv6.parse('::ffff:0:0');
  if (prefix <= 96) return prefix < WIDEST_TRUSTED_PREFIX || mapped.match(address as ipaddr.IPv6, prefix);
  return (address as ipaddr.IPv6).isIPv4MappedAddress() && prefix - 96 < WIDEST_TRUSTED_PREFIX;
}

const EXAMPLE_RANGE = "e.g. TRUST_PROXY=10.244.0.0/16, the ingress controller's pod range";

/**
 * In production the client address decides per-address limits, the admin lockout and the audit
 * record, so only named proxies may set it: `true` would believe X-Forwarded-For from anyone, and a
 * hop count believes whoever sits that many hops out, and so does a catch-all range such as
 * 0.0.0.0/0. Addresses or ranges of /8 or narrower only.
 */
function trustProxyProblem(env: NodeJS.ProcessEnv, trustProxy: boolean | number | string): string | null {
  if (env.NODE_ENV !== 'production' || trustProxy === false) return null;
  if (typeof trustProxy === 'string') {
    const wide = trustedProxyEntries(trustProxy).filter(isCatchAll);
    if (wide.length === 0) return null;
    return `TRUST_PROXY: ${wide.map((entry) => `"${entry}"`).join(', ')} ${wide.length > 1 ? 'are' : 'is'} wider than /${WIDEST_TRUSTED_PREFIX} and would believe X-Forwarded-For from almost anyone when NODE_ENV=production; name the proxies in front of the gateway (${EXAMPLE_RANGE})`;
  }
  return `TRUST_PROXY: must be the addresses or CIDR ranges of the proxies in front of the gateway when NODE_ENV=production (${EXAMPLE_RANGE}), or false; "${String(env.TRUST_PROXY)}" would believe X-Forwarded-For from ${trustProxy === true ? 'anyone' : 'whoever sits that many hops away'}`;
}

export type GatewaySettings = {
  port: number;
  /** Listen address: loopback by default (HOST=0.0.0.0 in containers). */
  host: string;
  /** /metrics has its own listener, so the public port never serves it. */
  metricsPort: number;
  mongoUrl: string;
  dbName: string;
  amqpUrl: string;
  exchange: string;
  internalToken: string;
  adminToken: string;
  redisUrl?: string;
  bootstrapApiKey?: string;
  /** The demo program's OWNER, created once with the demo program (only with bootstrapApiKey). */
  bootstrapOwner?: { email: string; password: string };
  upstreams: Record<UpstreamName, string>;
  defaultRateLimit: RateLimit;
  /** Failed authentications allowed per client address: on the public API, and on the admin API. */
  failedAuthLimits: { api: RateLimit; admin: RateLimit };
  anonymousRateLimit: RateLimit;
  /** Browser calls with a publishable key, per key and client address. */
  browserAddressRateLimit: RateLimit;
  /** Sign-up submissions per program and client address. */
  signupAddressRateLimit: RateLimit;
  /** Which forwarding headers to believe for the client address (express "trust proxy"). */
  trustProxy: boolean | number | string;
  /** How long audit records are kept, and how often the gateway deletes the older ones. */
  auditRetentionMs: number;
  auditSweepIntervalMs: number;
  /** One deadline for a proxied call, from its arrival: the wait for a connection, and the answer. */
  upstreamTimeoutMs: number;
  /** Connections to each service, shared by every program. */
  upstreamMaxSockets?: number;
  /** Requests one program may have in flight (waiting or sent) to one service. */
  upstreamMaxInFlightPerProgram?: number;
  bodyLimit: string;
  /** How long a looked-up key is trusted; a revoked key stops working after at most this long. */
  keyCacheTtlMs: number;
  /** A tripped upstream circuit lets a trial request through after this long. */
  circuitResetMs: number;
  logLevel?: string;
  outboxSweepIntervalMs?: number;
  /** After SIGTERM, how long /readyz answers 503 while requests are still served, before draining (default 0). */
  shutdownDelayMs?: number;
  /** How long an affiliate portal link can be opened (default 10 minutes; tests shorten it). */
  portalLinkTtlSeconds?: number;
  /** A console session's idle expiry (sliding) and absolute expiry (defaults 30 minutes and 12 hours; tests shorten them). */
  teamSessionIdleMs?: number;
  teamSessionMs?: number;
  /** Failed console sign-ins allowed per email and per client address in a window (defaults 10 and 50 in 15 minutes). */
  teamLoginLimits?: { account: RateLimit; address: RateLimit };
};

/** Refused in production when missing, short or shipped (the demo program's key and owner's password only when set). */
export const GATEWAY_SECRETS = {
  required: ['INTERNAL_TOKEN', 'ADMIN_TOKEN'],
  optional: ['BOOTSTRAP_API_KEY', 'BOOTSTRAP_OWNER_PASSWORD'],
} satisfies SecretSettings<keyof typeof gatewayConfigShape & string>;

/**
 * The demo owner needs both settings, and a demo program to own: one set alone, or an owner without
 * BOOTSTRAP_API_KEY, is a mistake to name at start rather than a console nobody can sign in to.
 */
function bootstrapOwnerProblem(config: { BOOTSTRAP_API_KEY?: string; BOOTSTRAP_OWNER_EMAIL?: string; BOOTSTRAP_OWNER_PASSWORD?: string }) {
  const { BOOTSTRAP_API_KEY: key, BOOTSTRAP_OWNER_EMAIL: email, BOOTSTRAP_OWNER_PASSWORD: password } = config;
  if (!email && !password) return null;
  const [missing, given] = email
    ? ['BOOTSTRAP_OWNER_PASSWORD', 'BOOTSTRAP_OWNER_EMAIL']
    : ['BOOTSTRAP_OWNER_EMAIL', 'BOOTSTRAP_OWNER_PASSWORD'];
  if (!email || !password)
    return `${missing}: required when ${given} is set (the demo program's OWNER signs in with both); set both or neither`;
  if (!key)
    return 'BOOTSTRAP_OWNER_EMAIL: needs BOOTSTRAP_API_KEY, whose demo program the owner is created for; set it too, or unset the owner';
  return null;
}

/** Validated settings from the environment; throws a ConfigError naming every bad variable. */
export function gatewaySettingsFromEnv(env: NodeJS.ProcessEnv = process.env): GatewaySettings {
  const config = parseConfig(gatewayConfigShape, env, { required: [...GATEWAY_SECRETS.required], optional: [...GATEWAY_SECRETS.optional] });
  const problems = [trustProxyProblem(env, config.TRUST_PROXY), bootstrapOwnerProblem(config)].filter((problem) => problem !== null);
  if (problems.length > 0) throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  const database = serviceDatabaseUrl(env, 'gateway', config.MONGO_URL);
  return {
    port: config.PORT,
    host: config.HOST,
    metricsPort: config.METRICS_PORT,
    mongoUrl: database.url,
    dbName: database.dbName,
    amqpUrl: config.AMQP_URL,
    exchange: config.EVENT_EXCHANGE,
    internalToken: config.INTERNAL_TOKEN,
    adminToken: config.ADMIN_TOKEN,
    redisUrl: config.REDIS_URL,
    bootstrapApiKey: config.BOOTSTRAP_API_KEY,
    bootstrapOwner:
      config.BOOTSTRAP_OWNER_EMAIL && config.BOOTSTRAP_OWNER_PASSWORD
        ? { email: config.BOOTSTRAP_OWNER_EMAIL, password: config.BOOTSTRAP_OWNER_PASSWORD }
        : undefined,
    upstreams: {
      coupon: config.COUPON_URL,
      affiliate: config.AFFILIATE_URL,
      referral: config.REFERRAL_URL,
      sale: config.SALE_URL,
      'webhook-dispatcher': config.WEBHOOK_DISPATCHER_URL,
    },
    defaultRateLimit: { points: config.RATE_LIMIT_POINTS, duration: config.RATE_LIMIT_DURATION_SECONDS },
    failedAuthLimits: {
      api: { points: config.UNAUTHENTICATED_RATE_LIMIT_POINTS, duration: config.UNAUTHENTICATED_RATE_LIMIT_DURATION_SECONDS },
      admin: { points: config.ADMIN_FAILED_AUTH_LIMIT, duration: config.ADMIN_FAILED_AUTH_WINDOW_SECONDS },
    },
    anonymousRateLimit: { points: config.ANONYMOUS_RATE_LIMIT_POINTS, duration: config.ANONYMOUS_RATE_LIMIT_DURATION_SECONDS },
    browserAddressRateLimit: { points: config.BROWSER_RATE_LIMIT_POINTS, duration: config.BROWSER_RATE_LIMIT_DURATION_SECONDS },
    signupAddressRateLimit: { points: config.SIGNUP_RATE_LIMIT_POINTS, duration: config.SIGNUP_RATE_LIMIT_DURATION_SECONDS },
    trustProxy: config.TRUST_PROXY,
    auditRetentionMs: config.AUDIT_RETENTION_DAYS * 86_400_000,
    auditSweepIntervalMs: 3_600_000,
    upstreamTimeoutMs: config.UPSTREAM_TIMEOUT_MS,
    upstreamMaxSockets: config.UPSTREAM_MAX_SOCKETS,
    upstreamMaxInFlightPerProgram: config.UPSTREAM_MAX_IN_FLIGHT_PER_PROGRAM,
    bodyLimit: config.BODY_LIMIT,
    keyCacheTtlMs: 2000,
    circuitResetMs: 5000,
    logLevel: config.LOG_LEVEL,
    shutdownDelayMs: config.SHUTDOWN_DELAY_MS,
    portalLinkTtlSeconds: config.PORTAL_LINK_TTL_SECONDS,
    teamSessionIdleMs: config.TEAM_SESSION_IDLE_MINUTES * 60_000,
    teamSessionMs: config.TEAM_SESSION_HOURS * 3_600_000,
    teamLoginLimits: {
      account: { points: config.TEAM_LOGIN_ACCOUNT_FAILURES, duration: config.TEAM_LOGIN_WINDOW_SECONDS },
      address: { points: config.TEAM_LOGIN_ADDRESS_FAILURES, duration: config.TEAM_LOGIN_WINDOW_SECONDS },
    },
  };
}
