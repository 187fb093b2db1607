import { attemptDelivery, leaseMs, type Dispatcher } from '../../domain/attempt-delivery';
import { claimDueDelivery, findDueDeliveries, type DueDelivery } from '../../domain/claim-delivery';

/**
 * Sends deliveries. A new delivery is pushed here by the fan-out and attempted at once; retries come
 * from the schedule (webhook_schedule, which holds only pending deliveries), polled every
 * `pollIntervalMs`, so a restart resumes it.
 *
 * Programs are served in turn: each has its own queue, and the sender takes one delivery from each
 * program with work before it takes a second from any, so one program's backlog never holds back
 * another's deliveries. Each endpoint has at most `endpointConcurrency` attempts in flight; a hanging
 * subscriber holds its own slots, never another endpoint's.
 */
export class DeliveryScheduler {
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private stopped = true;
  private failing = false;
  /** Waiting deliveries per program, in arrival order; programs in the Map's (round-robin) order. */
  private readonly waiting = new Map<string, DueDelivery[]>();
  /** Every delivery waiting or in flight here, so the schedule and the fan-out never queue one twice. */
  private readonly known = new Set<string>();
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

  /** New deliveries from the fan-out: their first attempt goes out now, in the program's turn. */
  push(deliveries: DueDelivery[]): void {
    for (const delivery of deliveries) this.enqueue(delivery);
    this.launchAll();
  }

  /** Look at the schedule now; polls never overlap. */
  nudge(): void {
    if (this.stopped || this.polling) return;
    this.polling = this.poll().finally(() => {
      this.polling = undefined;
    });
  }

  /** Stops taking work, cuts the attempts in flight short and waits for them to be recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    while (this.polling) await this.polling;
    this.waiting.clear();
    this.dispatcher.client.abortAll();
    await Promise.allSettled([...this.attempts]);
    this.dispatcher.circuits.shutdown();
  }

  private async poll(): Promise<void> {
    const { settings, logger, repositories } = this.dispatcher;
    try {
      // Enough work in hand already: the schedule is read again once it runs low.
      if (this.known.size >= settings.maxInFlight) return;
      // Enough to keep every slot busy; what is queued here already is skipped by enqueue().
      const due = await findDueDeliveries(repositories, settings.maxInFlight + this.known.size);
      for (const delivery of due) this.enqueue(delivery);
      this.launchAll();
      if (this.failing) logger.info('webhook scheduler claiming again');
      this.failing = false;
    } catch (error) {
      if (!this.failing) logger.warn({ err: error }, 'webhook scheduler cannot read the schedule; retrying');
      this.failing = true;
    }
  }

  private enqueue(delivery: DueDelivery): void {
    if (this.stopped || this.known.has(delivery._id)) return;
    this.known.add(delivery._id);
    const queue = this.waiting.get(delivery.programId);
    if (queue) queue.push(delivery);
    else this.waiting.set(delivery.programId, [delivery]);
  }

  /** Starts attempts while slots are free, taking programs in turn. */
  private launchAll(): void {
    const { maxInFlight } = this.dispatcher.settings;
    while (!this.stopped && this.attempts.size < maxInFlight) {
      const next = this.takeNext();
      if (!next) return;
      this.launch(next);
    }
  }

  /**
   * The first sendable delivery of the program whose turn it is; the program then goes to the back
   * of the line. Deliveries whose endpoint is at its bound stay where they are.
   */
  private takeNext(): DueDelivery | undefined {
    const { endpointConcurrency } = this.dispatcher.settings;
    for (const [programId, queue] of this.waiting) {
      const index = queue.findIndex((delivery) => (this.inFlightByEndpoint.get(delivery.endpointId) ?? 0) < endpointConcurrency);
      if (index < 0) continue;
      const [delivery] = queue.splice(index, 1) as [DueDelivery];
      this.waiting.delete(programId);
      if (queue.length > 0) this.waiting.set(programId, queue);
      return delivery;
    }
    return undefined;
  }

  private launch(delivery: DueDelivery): void {
    const { endpointId } = delivery;
    this.inFlightByEndpoint.set(endpointId, (this.inFlightByEndpoint.get(endpointId) ?? 0) + 1);
    const attempt = this.claimAndAttempt(delivery)
      .catch((error: unknown) => {
        // The lease runs out and the schedule offers the delivery again: nothing is lost.
        this.dispatcher.logger.warn({ err: error, deliveryId: delivery._id }, 'webhook attempt could not be recorded');
      })
      .finally(() => {
        const left = (this.inFlightByEndpoint.get(endpointId) ?? 1) - 1;
        if (left === 0) this.inFlightByEndpoint.delete(endpointId);
        else this.inFlightByEndpoint.set(endpointId, left);
        this.known.delete(delivery._id);
        this.attempts.delete(attempt);
        this.launchAll();
      });
    this.attempts.add(attempt);
  }

  private async claimAndAttempt(delivery: DueDelivery): Promise<void> {
    const claimed = await claimDueDelivery(this.dispatcher.repositories, delivery, leaseMs(this.dispatcher.settings));
    if (!claimed) return; // another replica took it, or it is no longer pending
    await attemptDelivery(this.dispatcher, claimed, 'scheduled');
  }
}
