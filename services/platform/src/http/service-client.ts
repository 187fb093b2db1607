import { AppError } from '../errors';
import { currentRequestContext, type Logger } from '../logger';
import { INTERNAL_TOKEN_HEADER, PROGRAM_ID_HEADER, REQUEST_ID_HEADER } from './internal-auth';
import type { CircuitMetrics } from '../metrics';
import { KeyedCircuits } from './keyed-circuits';

export type ServiceRequest = {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  programId: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
};

export type ServiceResponse<T = unknown> = { status: number; body: T };

export type ServiceClientOptions = {
  name: string;
  baseUrl: string;
  internalToken: string;
  logger: Logger;
  timeoutMs?: number;
  /** Failures (timeouts, connection errors) in a rolling window before the circuit opens. */
  errorThresholdPercentage?: number;
  resetTimeoutMs?: number;
  metrics?: CircuitMetrics;
};

/** The other service answered, with a 5xx: alive, so the circuit does not count it (one payload, or a busy moment). */
class UpstreamFailure extends Error {
  constructor(
    readonly status: number,
    readonly retryAfterSeconds: number | undefined,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Calls another service with the internal credential and the caller's program scope. A circuit
 * breaker makes a dead dependency fail fast (503) instead of tying up every request for the timeout.
 * It counts what says the dependency itself is unhealthy (connection failures, its own timeouts),
 * never an answer: 4xx answers are the other service's verdict and are returned; a 5xx is passed on
 * as a 503 (a busy service's Retry-After kept), not counted, so a service shedding load under a
 * burst never opens its callers' circuits. Each program has its own circuit, as in the gateway: a
 * timeout can be one program's doing, so it must not shut the dependency for the others.
 */
export function createServiceClient(options: ServiceClientOptions) {
  const timeoutMs = options.timeoutMs ?? 3000;

  const send = async (request: ServiceRequest): Promise<ServiceResponse> => {
    const url = new URL(request.path, options.baseUrl);
    for (const [key, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, value);
    }
    const headers: Record<string, string> = {
      [INTERNAL_TOKEN_HEADER]: options.internalToken,
      [PROGRAM_ID_HEADER]: request.programId,
      accept: 'application/json',
    };
    const requestId = currentRequestContext()?.requestId;
    if (requestId) headers[REQUEST_ID_HEADER] = requestId;
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(url, {
      method: request.method,
      headers,
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    const body: unknown = text ? JSON.parse(text) : null;
    if (response.status >= 500) {
      const retryAfter = Number(response.headers.get('retry-after'));
      throw new UpstreamFailure(
        response.status,
        Number.isInteger(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
        `${options.name} answered ${response.status}`,
      );
    }
    return { status: response.status, body };
  };

  const circuits = new KeyedCircuits(
    send,
    {
      name: options.name,
      keyName: 'programId',
      openedMeans: "this program's calls fail fast",
      timeout: false, // the fetch has its own abort timeout, which also frees the socket
      errorThresholdPercentage: options.errorThresholdPercentage ?? 50,
      resetTimeout: options.resetTimeoutMs ?? 5000,
      volumeThreshold: 5,
      errorFilter: (error: unknown) => error instanceof UpstreamFailure,
      rollingCountTimeout: 10_000,
      metrics: options.metrics,
    },
    options.logger,
  );

  return {
    /** Whether the program's circuit to this service is open (its calls fail fast for now). */
    circuitOpen: (programId: string) => circuits.isOpen(programId),
    async request<T = unknown>(request: ServiceRequest): Promise<ServiceResponse<T>> {
      try {
        return (await circuits.of(request.programId).fire(request)) as ServiceResponse<T>;
      } catch (error) {
        options.logger.warn({ err: error, upstream: options.name, path: request.path }, 'upstream call failed');
        if (error instanceof UpstreamFailure && error.status === 503 && error.retryAfterSeconds !== undefined) {
          throw new AppError(503, `The ${options.name} service is busy; retry in a moment`, {
            code: 'service_busy',
            retryAfterSeconds: error.retryAfterSeconds,
          });
        }
        throw new AppError(503, `The ${options.name} service is unavailable; retry later`);
      }
    },
    shutdown: () => circuits.shutdown(),
  };
}

export type ServiceClient = ReturnType<typeof createServiceClient>;
