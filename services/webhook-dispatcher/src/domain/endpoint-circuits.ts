import { KeyedCircuits, type CircuitMetrics, type Logger } from '@affiliate/platform';
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
  private readonly circuits: KeyedCircuits<[WebhookRequest], SendOutcome>;

  constructor(client: SubscriberClient, settings: DispatcherSettings['breaker'], logger: Logger, metrics?: CircuitMetrics) {
    this.circuits = new KeyedCircuits(
      async (request: WebhookRequest) => {
        const outcome = await client.send(request);
        if (!isDelivered(outcome)) throw new FailedAttempt(outcome);
        return outcome;
      },
      {
        name: 'webhook-endpoint',
        keyName: 'endpointId',
        openedMeans: "the endpoint's deliveries wait",
        timeout: false, // the client bounds each attempt itself
        errorThresholdPercentage: settings.errorThresholdPercentage,
        volumeThreshold: settings.volumeThreshold,
        resetTimeout: settings.resetTimeoutMs,
        rollingCountTimeout: 60_000,
        // Endpoints are forgotten when deleted; an idle healthy one costs a closed circuit at most.
        maxKeys: Number.MAX_SAFE_INTEGER,
        // One series for all endpoints: how many of them are being left alone, never which.
        metrics,
      },
      logger,
    );
  }

  /** The attempt's outcome, or CIRCUIT_OPEN when the endpoint is being left alone for now (nothing was sent). */
  async send(endpointId: string, request: WebhookRequest): Promise<SendOutcome | typeof CIRCUIT_OPEN> {
    try {
      return await this.circuits.of(endpointId).fire(request);
    } catch (error) {
      if (error instanceof FailedAttempt) return error.outcome;
      if ((error as { code?: unknown }).code === 'EOPENBREAKER') return CIRCUIT_OPEN;
      throw error;
    }
  }

  forget(endpointId: string): void {
    this.circuits.forget(endpointId);
  }

  shutdown(): void {
    this.circuits.shutdown();
  }
}
