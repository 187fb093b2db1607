import type { Logger } from '@affiliate/platform';
import CircuitBreaker from 'opossum';
import type { DispatcherSettings } from '../config';
import { isDelivered, type SendOutcome, type SubscriberClient, type WebhookRequest } from '../data-access/subscriber-client';

class FailedAttempt extends Error {
  constructor(readonly outcome: SendOutcome) {
    super(outcome.error ?? `answered ${outcome.statusCode}`);
  }
}

export const CIRCUIT_OPEN = 'circuit-open' as const;

/**
 * One opossum circuit breaker per endpoint: after a run of failures the endpoint's deliveries wait
 * for the breaker to half-open instead of each spending a connection and a timeout on it.
 */
export class EndpointCircuits {
  private readonly breakers = new Map<string, CircuitBreaker<[WebhookRequest], SendOutcome>>();

  constructor(
    private readonly client: SubscriberClient,
    private readonly settings: DispatcherSettings['breaker'],
    private readonly logger: Logger,
  ) {}

  /** The attempt's outcome, or CIRCUIT_OPEN when the endpoint is being left alone for now (nothing was sent). */
  async send(endpointId: string, request: WebhookRequest): Promise<SendOutcome | typeof CIRCUIT_OPEN> {
    try {
      return await this.breakerOf(endpointId).fire(request);
    } catch (error) {
      if (error instanceof FailedAttempt) return error.outcome;
      if ((error as { code?: unknown }).code === 'EOPENBREAKER') return CIRCUIT_OPEN;
      throw error;
    }
  }

  forget(endpointId: string): void {
    this.breakers.get(endpointId)?.shutdown();
    this.breakers.delete(endpointId);
  }

  shutdown(): void {
    for (const endpointId of [...this.breakers.keys()]) this.forget(endpointId);
  }

  private breakerOf(endpointId: string): CircuitBreaker<[WebhookRequest], SendOutcome> {
    let breaker = this.breakers.get(endpointId);
    if (!breaker) {
      breaker = new CircuitBreaker(
        async (request: WebhookRequest) => {
          const outcome = await this.client.send(request);
          if (!isDelivered(outcome)) throw new FailedAttempt(outcome);
          return outcome;
        },
        {
          name: `webhook-endpoint-${endpointId}`,
          timeout: false, // the client bounds each attempt itself
          errorThresholdPercentage: this.settings.errorThresholdPercentage,
          volumeThreshold: this.settings.volumeThreshold,
          resetTimeout: this.settings.resetTimeoutMs,
          rollingCountTimeout: 60_000,
        },
      );
      breaker.on('open', () => this.logger.warn({ endpointId }, 'webhook endpoint circuit opened: its deliveries wait'));
      breaker.on('close', () => this.logger.info({ endpointId }, 'webhook endpoint circuit closed'));
      this.breakers.set(endpointId, breaker);
    }
    return breaker;
  }
}
