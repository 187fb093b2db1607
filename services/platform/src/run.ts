import { z, type ZodRawShape } from 'zod';
import { baseConfigShape, loadConfig, parseConfig, serviceDatabaseUrl } from './config';
import { DEFAULT_ADMISSION } from './http/admission';
import { DEFAULT_SHEDDING } from './http/backlog-shedding';
import { bootService, stopOnSignals, type ServiceContext, type ServiceParts } from './service';

/** Default addresses of the components (DESIGN.md §7); each can be overridden from the environment. */
export const DEFAULT_PORTS = {
  gateway: 8080,
  coupon: 3001,
  affiliate: 3002,
  referral: 3003,
  sale: 3004,
  'webhook-dispatcher': 3005,
} as const;

export type ComponentName = keyof typeof DEFAULT_PORTS;

export const serviceUrlSetting = (component: ComponentName) => z.string().url().default(`http://127.0.0.1:${DEFAULT_PORTS[component]}`);

/**
 * The whole of a service's start.ts: read and validate the environment (a bad setting stops the
 * process with a message naming it), boot, and stop gracefully on SIGTERM.
 */
export function runService<Shape extends ZodRawShape>(options: {
  name: Exclude<ComponentName, 'gateway'>;
  config: Shape;
  /** The service's own secrets, required in production like INTERNAL_TOKEN and refused when shipped. */
  secrets?: (keyof Shape & string)[];
  build: (context: ServiceContext, config: z.infer<z.ZodObject<Shape>>) => ServiceParts | Promise<ServiceParts>;
}): void {
  const baseShape = {
    ...baseConfigShape,
    PORT: z.coerce.number().int().min(0).max(65535).default(DEFAULT_PORTS[options.name]),
    // Unset: /metrics on PORT, as locally, where the six processes share one address. Set (the
    // manifests: 9464, as the gateway), a listener of its own, which a NetworkPolicy opens to the
    // monitoring namespace without opening the API port.
    METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
    MAX_CONCURRENT_REQUESTS: z.coerce.number().int().min(1).default(DEFAULT_ADMISSION.maxConcurrent),
    MAX_QUEUED_REQUESTS: z.coerce.number().int().min(0).default(DEFAULT_ADMISSION.maxQueued),
    MAX_QUEUE_WAIT_MS: z.coerce.number().int().min(0).default(DEFAULT_ADMISSION.maxWaitMs),
    REQUEST_DEADLINE_MS: z.coerce.number().int().min(1).default(DEFAULT_ADMISSION.deadlineMs),
    MAX_CONCURRENT_REQUESTS_PER_PROGRAM: z.coerce.number().int().min(1).default(DEFAULT_ADMISSION.maxConcurrentPerProgram),
    MAX_QUEUED_REQUESTS_PER_PROGRAM: z.coerce.number().int().min(0).default(DEFAULT_ADMISSION.maxQueuedPerProgram),
    SHED_WEBHOOK_BACKLOG: z.coerce.number().int().min(1).default(DEFAULT_SHEDDING.webhookBacklog),
    SHED_WEBHOOK_BACKLOG_PER_PROGRAM: z.coerce.number().int().min(1).default(DEFAULT_SHEDDING.webhookBacklogPerProgram),
    SHED_OUTBOX_AGE_SECONDS: z.coerce
      .number()
      .min(1)
      .default(DEFAULT_SHEDDING.outboxAgeMs / 1000),
  };
  // Validate everything at once so every bad variable is named in one message; then read each part typed.
  loadConfig({ ...baseShape, ...options.config }, { required: ['INTERNAL_TOKEN', ...(options.secrets ?? [])] });
  const base = parseConfig(baseShape);
  const own = parseConfig(options.config);
  const database = serviceDatabaseUrl(process.env, options.name, base.MONGO_URL);
  bootService(
    {
      name: options.name,
      port: base.PORT,
      metricsPort: base.METRICS_PORT,
      host: base.HOST,
      mongoUrl: database.url,
      dbName: database.dbName,
      amqpUrl: base.AMQP_URL,
      exchange: base.EVENT_EXCHANGE,
      internalToken: base.INTERNAL_TOKEN,
      logLevel: base.LOG_LEVEL,
      queueType: base.AMQP_QUEUE_TYPE,
      shutdownDelayMs: base.SHUTDOWN_DELAY_MS,
      admission: {
        maxConcurrent: base.MAX_CONCURRENT_REQUESTS,
        maxQueued: base.MAX_QUEUED_REQUESTS,
        maxWaitMs: base.MAX_QUEUE_WAIT_MS,
        deadlineMs: base.REQUEST_DEADLINE_MS,
        maxConcurrentPerProgram: base.MAX_CONCURRENT_REQUESTS_PER_PROGRAM,
        maxQueuedPerProgram: base.MAX_QUEUED_REQUESTS_PER_PROGRAM,
      },
      shedding: {
        webhookBacklog: base.SHED_WEBHOOK_BACKLOG,
        webhookBacklogPerProgram: base.SHED_WEBHOOK_BACKLOG_PER_PROGRAM,
        outboxAgeMs: base.SHED_OUTBOX_AGE_SECONDS * 1000,
      },
    },
    (context) => options.build(context, own),
  ).then(
    (service) => stopOnSignals(service, service.context.logger, undefined, base.SHUTDOWN_DELAY_MS),
    (error: unknown) => {
      process.stderr.write(`${options.name} could not start: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
