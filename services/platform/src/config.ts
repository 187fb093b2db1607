import { z, type ZodRawShape } from 'zod';

const booleanFromEnv = z
  .enum(['true', 'false', '1', '0'])
  .transform((value) => value === 'true' || value === '1');

/** Settings every process shares (DESIGN.md §7). Local defaults for everything; production demands secrets. */
export const baseConfigShape = {
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  MONGO_URL: z.string().regex(/^mongodb(\+srv)?:\/\//, 'must be a mongodb:// URL').default('mongodb://127.0.0.1:27017'),
  AMQP_URL: z.string().regex(/^amqps?:\/\//, 'must be an amqp:// URL').default('amqp://guest:guest@127.0.0.1:5672'),
  INTERNAL_TOKEN: z.string().min(16, 'must be at least 16 characters').default('local-internal-token-change-me'),
  EVENT_EXCHANGE: z.string().min(1).default('affiliate.events'),
  /** quorum on a RabbitMQ cluster (replicated queues); classic on a single broker. */
  AMQP_QUEUE_TYPE: z.enum(['classic', 'quorum']).default('classic'),
};

export const booleanSetting = booleanFromEnv;

export class ConfigError extends Error {}

/**
 * Parses the environment against a schema. Every bad variable is named in one message, so an
 * operator fixes them all in one go instead of restarting in a crash loop.
 */
export function parseConfig<Shape extends ZodRawShape>(
  shape: Shape,
  env: NodeJS.ProcessEnv = process.env,
  secretsRequiredInProduction: (keyof Shape & string)[] = [],
): z.infer<z.ZodObject<Shape>> {
  const result = z.object(shape).safeParse(env);
  const problems = result.success
    ? []
    : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  if (env.NODE_ENV === 'production') {
    for (const name of secretsRequiredInProduction) {
      if (!env[name]) problems.push(`${name}: required when NODE_ENV=production`);
    }
  }
  if (problems.length > 0 || !result.success) {
    throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  return result.data;
}

/** Like parseConfig, but a bad setting ends the process with a message naming the variable. */
export function loadConfig<Shape extends ZodRawShape>(
  shape: Shape,
  secretsRequiredInProduction: (keyof Shape & string)[] = [],
): z.infer<z.ZodObject<Shape>> {
  try {
    return parseConfig(shape, process.env, secretsRequiredInProduction);
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
