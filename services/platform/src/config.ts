import { z, type ZodRawShape } from 'zod';

const booleanFromEnv = z
  .enum(['true', 'false', '1', '0'])
  .transform((value) => value === 'true' || value === '1');

/** Settings every process shares (DESIGN.md §7). Local defaults for everything; production demands secrets. */
export const baseConfigShape = {
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  MONGO_URL: z.string().regex(/^mongodb(\+srv)?:\/\//, 'must be a mongodb:// URL').default('mongodb://127.0.0.1:27017'),
  /** One RabbitMQ URL, or a cluster's nodes separated by commas: the bus moves to the next when one dies. */
  AMQP_URL: z
    .string()
    .regex(/^\s*amqps?:\/\/[^,\s]+\s*(,\s*amqps?:\/\/[^,\s]+\s*)*$/, 'must be an amqp:// URL, or several separated by commas')
    .default('amqp://guest:guest@127.0.0.1:5672'),
  INTERNAL_TOKEN: z.string().min(16, 'must be at least 16 characters').default('local-internal-token-change-me'),
  /** The address to listen on: loopback unless told otherwise (containers set 0.0.0.0). */
  HOST: z.string().min(1).default('127.0.0.1'),
  EVENT_EXCHANGE: z.string().min(1).default('affiliate.events'),
  /** quorum on a RabbitMQ cluster (replicated queues); classic on a single broker. */
  AMQP_QUEUE_TYPE: z.enum(['classic', 'quorum']).default('classic'),
  /**
   * After SIGTERM, how long the process answers /readyz 503 while still serving, before it drains:
   * time for load balancers to stop sending it requests. 0 locally and in tests.
   */
  SHUTDOWN_DELAY_MS: z.coerce.number().int().min(0).max(60_000).default(0),
};

export const booleanSetting = booleanFromEnv;

export class ConfigError extends Error {}

/** Shorter secrets are refused in production: 32 characters of a generator's output is 128+ bits. */
export const MIN_PRODUCTION_SECRET_LENGTH = 32;

/**
 * Every secret value this repository ships (code defaults, compose, .env.example, the trial
 * overlay, the README's demo key). They are public, so production refuses them by value.
 */
export const SHIPPED_DEFAULT_SECRETS: ReadonlySet<string> = new Set([
  'local-internal-token-change-me',
  'local-admin-token-change-me',
  'ak_demo_local_development_key_change_me',
  'change-me-internal-token-0123456789',
  'change-me-admin-token-0123456789',
  'dev-internal-token-change-me',
  'dev-admin-token-change-me',
  // The test and bench credentials: long enough to pass the length rule, and just as public.
  'system-test-internal-token-0123456789',
  'system-test-admin-token-0123456789',
  'ak_demo_test_bootstrap_key_0123456789',
  // The webhook dispatcher's development key for signing secrets at rest, and the trial overlay's.
  'f3a1c2d4e5b60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9a',
  '5e0c7a3b9d2f4e6a8c1b3d5f7e9a0c2b4d6f8a1c3e5b7d9f0a2c4e6b8d1f3a5c',
]);

/**
 * The least a production secret must carry, estimated as its length times the Shannon entropy of its
 * characters. Any generator's 32 characters carry far more (hex about 115 bits, base64 about 150);
 * a repeated character, a short pattern or blanks carry next to nothing.
 */
export const MIN_PRODUCTION_SECRET_BITS = 80;

/** Bits of a value estimated from how its characters are spread (an upper bound for patterns, zero for one repeated character). */
export function estimatedEntropyBits(value: string): number {
  const characters = [...value];
  const counts = new Map<string, number>();
  for (const character of characters) counts.set(character, (counts.get(character) ?? 0) + 1);
  let perCharacter = 0;
  for (const count of counts.values()) {
    const share = count / characters.length;
    perCharacter -= share * Math.log2(share);
  }
  return perCharacter * characters.length;
}

/** The secrets of a process: required ones must be set in production; optional ones, when set, obey the same rules. */
export type SecretSettings<Name extends string> = { required: Name[]; optional?: Name[] };

function secretProblems(env: NodeJS.ProcessEnv, secrets: SecretSettings<string>): string[] {
  const problems: string[] = [];
  for (const name of [...secrets.required, ...(secrets.optional ?? [])]) {
    const value = env[name];
    if (!value) {
      if (secrets.required.includes(name)) problems.push(`${name}: required when NODE_ENV=production`);
    } else if (SHIPPED_DEFAULT_SECRETS.has(value) || /change[-_]?me/i.test(value)) {
      problems.push(`${name}: is a shipped default, which is public; generate one with \`openssl rand -hex 32\``);
    } else if (value.trim() === '') {
      problems.push(`${name}: is only whitespace; generate one with \`openssl rand -hex 32\``);
    } else if (value.length < MIN_PRODUCTION_SECRET_LENGTH) {
      problems.push(`${name}: must be at least ${MIN_PRODUCTION_SECRET_LENGTH} characters when NODE_ENV=production`);
    } else if (estimatedEntropyBits(value.trim()) < MIN_PRODUCTION_SECRET_BITS) {
      problems.push(`${name}: is too predictable (repeated characters or a short pattern); generate one with \`openssl rand -hex 32\``);
    }
  }
  return problems;
}

/**
 * Parses the environment against a schema. Every bad variable is named in one message, so an
 * operator fixes them all in one go instead of restarting in a crash loop. With NODE_ENV=production
 * every secret must be set, long, and not one this repository ships.
 */
export function parseConfig<Shape extends ZodRawShape>(
  shape: Shape,
  env: NodeJS.ProcessEnv = process.env,
  secrets: SecretSettings<keyof Shape & string> = { required: [] },
): z.infer<z.ZodObject<Shape>> {
  const result = z.object(shape).safeParse(env);
  const problems = result.success
    ? []
    : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  if (env.NODE_ENV === 'production') problems.push(...secretProblems(env, secrets));
  if (problems.length > 0 || !result.success) {
    throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  return result.data;
}

/** Like parseConfig, but a bad setting ends the process with a message naming the variable. */
export function loadConfig<Shape extends ZodRawShape>(
  shape: Shape,
  secrets: SecretSettings<keyof Shape & string> = { required: [] },
): z.infer<z.ZodObject<Shape>> {
  try {
    return parseConfig(shape, process.env, secrets);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78); // EX_CONFIG: systemd and supervisors treat it as "do not restart blindly"
    }
    throw error;
  }
}

/**
 * The database a service uses: its own URL if given (e.g. COUPON_MONGO_URL), else MONGO_URL, with its
 * own database name `<MONGO_DB_PREFIX>_<service>` (prefix `affiliate`), or MONGO_DB_NAME verbatim.
 */
export function serviceDatabaseUrl(env: NodeJS.ProcessEnv, serviceKey: string, fallbackUrl: string): { url: string; dbName: string } {
  const own = env[`${serviceKey.toUpperCase().replace(/-/g, '_')}_MONGO_URL`];
  const prefix = env.MONGO_DB_PREFIX ?? 'affiliate';
  return { url: own ?? fallbackUrl, dbName: env.MONGO_DB_NAME ?? `${prefix}_${serviceKey.replace(/-/g, '_')}` };
}
