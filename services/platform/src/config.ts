import { z, type ZodRawShape } from 'zod';

const booleanFromEnv = z.enum(['true', 'false', '1', '0']).transform((value) => value === 'true' || value === '1');

/** Settings every process shares (DESIGN.md §7). Local defaults for everything; production demands secrets. */
export const baseConfigShape = {
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  MONGO_URL: z
    .string()
    .regex(/^mongodb(\+srv)?:\/\//, 'must be a mongodb:// URL')
    .default('mongodb://127.0.0.1:27017'),
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
  // The demo program's owner's password (BOOTSTRAP_OWNER_PASSWORD under `npm start` and in the trial overlay).
  'local-demo-password-change-me',
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
  // The API reference's example webhook signing secret (contracts/src/operation-examples.ts).
  'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  // And its example invite token (the same file), which the secrets scan reads as a …TOKEN.
  '0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d.Qm9vdHN0cmFwVG9rZW5PZkFuSW52aXRlRXhhbXBsZTEyMzQ',
]);

/**
 * The least a production secret must carry, as `estimatedEntropyBits` counts it. Any generator's 32
 * characters carry more (32 hex characters at least about 90 in that count, 64 about 220, base64
 * more); a repeated word, a run such as 0123…, a short pattern or blanks carry next to nothing.
 */
export const MIN_PRODUCTION_SECRET_BITS = 80;

/** A stretch that occurred before (at least this long) is a repetition, not new information. */
const MIN_REPEAT = 4;
/** What a repetition costs to say: where it starts and how long it runs. */
const BITS_PER_REPEAT = 8;

/** Length times the Shannon entropy of the symbols: how they are spread, blind to their order. */
function spreadBits(symbols: number[]): number {
  const counts = new Map<number, number>();
  for (const symbol of symbols) counts.set(symbol, (counts.get(symbol) ?? 0) + 1);
  let perSymbol = 0;
  for (const count of counts.values()) perSymbol -= (count / symbols.length) * Math.log2(count / symbols.length);
  return perSymbol * symbols.length;
}

/**
 * The spread of the symbols left once every stretch of MIN_REPEAT or more that already occurred
 * (overlapping too, as LZ77 reads it) is replaced by a reference of BITS_PER_REPEAT bits: so
 * "passwordpassword…" counts as "password" plus one reference. Quadratic, for values of a few dozen characters.
 */
function repeatAwareBits(symbols: number[]): number {
  const fresh: number[] = [];
  let repeats = 0;
  for (let at = 0; at < symbols.length;) {
    let longest = 0;
    for (let from = 0; from < at; from += 1) {
      let length = 0;
      while (at + length < symbols.length && symbols[from + length] === symbols[at + length]) length += 1;
      longest = Math.max(longest, length);
    }
    if (longest >= MIN_REPEAT) {
      repeats += 1;
      at += longest;
    } else {
      fresh.push(symbols[at] as number);
      at += 1;
    }
  }
  return spreadBits(fresh) + repeats * BITS_PER_REPEAT;
}

/**
 * Bits of a value, estimated the cheaper of two ways: its characters with repetitions counted once,
 * and the steps between consecutive characters counted the same way, which makes a run such as
 * 0123456789abcdef (every step +1) as cheap as one repeated character. An estimate for refusing the
 * predictable, not a guarantee for what passes: generate secrets (`openssl rand -hex 32`).
 */
export function estimatedEntropyBits(value: string): number {
  const codePoints = [...value].map((character) => character.codePointAt(0) as number);
  const steps = codePoints.slice(1).map((codePoint, index) => codePoint - (codePoints[index] as number));
  return Math.min(repeatAwareBits(codePoints), repeatAwareBits(steps));
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
      problems.push(
        `${name}: is too predictable (repeated characters, a repeated word or pattern, or a run such as 0123…); generate one with \`openssl rand -hex 32\``,
      );
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
  const problems = result.success ? [] : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
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
