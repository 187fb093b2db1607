import { attemptDelivery, leaseMs, type Dispatcher } from '../../domain/attempt-delivery';
import { claimDueDelivery, findDueDeliveries, type ClaimedDelivery } from '../../domain/claim-delivery';

/**
 * Sends due deliveries. The schedule lives in the database (nextAttemptAt), so a restart resumes it;
 * this loop only claims what is due, by polling and at once when nudged after a new event. Each
 * endpoint has at most `endpointConcurrency` attempts in flight, and an endpoint at its bound is
 * skipped when claiming: a hanging subscriber holds its own slots, never another endpoint's.
 */
export class DeliveryScheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private rerun = false;
  private stopped = true;
  private failing = false;
  private readonly inFlightByEndpoint = new Map<string, number>();
  private readonly attempts = new Set<Promise<void>>();

  constructor(private readonly dispatcher: Dispatcher) {}

  start(): void {
    this.stopped = false;
    const tick = () => {
      if (this.stopped) return;
      this.nudge();
      this.timer = setTimeout(tick, this.dispatcher.settings.pollIntervalMs);
      this.timer.unref();
    };
    tick();
  }

  /** Look for due deliveries now; passes never overlap, and a nudge during one schedules another. */
  nudge(): void {
    if (this.stopped) return;
    if (this.running) {
      this.rerun = true;
      return;
    }
    this.running = this.pass().finally(() => {
      this.running = undefined;
      if (this.rerun) {
        this.rerun = false;
        this.nudge();
      }
    });
  }

  /** Stops claiming, cuts the attempts in flight short and waits for them to be recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    while (this.running) await this.running;
    this.dispatcher.client.abortAll();
    await Promise.allSettled([...this.attempts]);
    this.dispatcher.circuits.shutdown();
  }

  private async pass(): Promise<void> {
    const { models, settings, logger } = this.dispatcher;
    try {
      while (!this.stopped && this.attempts.size < settings.maxInFlight) {
        const due = await findDueDeliveries(models, this.busyEndpoints(), settings.maxInFlight - this.attempts.size);
        let launched = 0;
        for (const candidate of due) {
          if (this.stopped || this.attempts.size >= settings.maxInFlight) break;
          if ((this.inFlightByEndpoint.get(candidate.endpointId) ?? 0) >= settings.endpointConcurrency) continue;
          const delivery = await claimDueDelivery(models, candidate._id, leaseMs(settings));
          if (!delivery) continue; // another replica took it
          this.launch(delivery);
          launched += 1;
        }
        if (launched === 0) break;
      }
      if (this.failing) logger.info('webhook scheduler claiming again');
      this.failing = false;
    } catch (error) {
      if (!this.failing) logger.warn({ err: error }, 'webhook scheduler cannot claim deliveries; retrying');
      this.failing = true;
    }
  }

  private busyEndpoints(): string[] {
    const { endpointConcurrency } = this.dispatcher.settings;
    return [...this.inFlightByEndpoint].filter(([, count]) => count >= endpointConcurrency).map(([endpointId]) => endpointId);
  }

  private launch(delivery: ClaimedDelivery): void {
    const { endpointId } = delivery;
    this.inFlightByEndpoint.set(endpointId, (this.inFlightByEndpoint.get(endpointId) ?? 0) + 1);
    const attempt = attemptDelivery(this.dispatcher, delivery, 'scheduled')
      .then(() => undefined)
      .catch((error: unknown) => {
        // The lease runs out and the delivery is claimed again: nothing is lost.
        this.dispatcher.logger.warn({ err: error, deliveryId: delivery._id }, 'webhook attempt could not be recorded');
      })
      .finally(() => {
        const left = (this.inFlightByEndpoint.get(endpointId) ?? 1) - 1;
        if (left === 0) this.inFlightByEndpoint.delete(endpointId);
        else this.inFlightByEndpoint.set(endpointId, left);
        this.attempts.delete(attempt);
        this.nudge();
      });
    this.attempts.add(attempt);
  }
}
