import { outsideAnyTrace } from '@affiliate/platform';
import { attemptDelivery, leaseMs, RECORDING_MARGIN_MS, type Dispatcher } from '../../domain/attempt-delivery';
import {
  claimDueDelivery,
  findDueDeliveries,
  startLeasedDelivery,
  type ClaimedDelivery,
  type DueDelivery,
} from '../../domain/claim-delivery';
import { heldBackUntil, holdBack } from '../../domain/ordered-delivery';

/** A delivery waiting here: found due in the schedule, or new from the fan-out and leased to us already. */
type Queued = DueDelivery & { leased?: ClaimedDelivery };

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
  /**
   * Waiting deliveries per program and, within it, per endpoint, in arrival order; programs and
   * their endpoints in the Maps' (round-robin) order. Per endpoint, so that taking the next one skips
   * an endpoint at its bound in one step, however many of its deliveries wait.
   */
  private readonly waiting = new Map<string, Map<string, Queued[]>>();
  /** Every delivery waiting or in flight here, so the schedule and the fan-out never queue one twice. */
  private readonly known = new Set<string>();
  private readonly inFlightByEndpoint = new Map<string, number>();
  private readonly attempts = new Set<Promise<void>>();

  private readonly dispatcher: Dispatcher;

  constructor(dispatcher: Dispatcher) {
    // A delivery an attempt here released (the next revision of its object) is taken at once.
    this.dispatcher = { ...dispatcher, released: (delivery) => this.take(delivery) };
  }

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

  /** New deliveries from the fan-out, leased to this process: their first attempt goes out now, in the program's turn. */
  push(deliveries: ClaimedDelivery[]): void {
    for (const delivery of deliveries)
      this.enqueue({ _id: delivery._id, programId: delivery.programId, endpointId: delivery.endpointId, leased: delivery });
    this.launchAll();
  }

  /** A delivery that is due now, found other than by a look at the schedule: it goes in the program's turn. */
  private take(delivery: DueDelivery): void {
    this.enqueue(delivery);
    this.launchAll();
  }

  /** Deliveries waiting here for an attempt, per program: part of the backlog the dispatcher tells the services (BacklogNews). */
  waitingPerProgram(): Map<string, number> {
    const waiting = new Map<string, number>();
    for (const [programId, program] of this.waiting) {
      let count = 0;
      for (const queue of program.values()) count += queue.length;
      waiting.set(programId, count);
    }
    return waiting;
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

  private enqueue(delivery: Queued): void {
    if (this.stopped || this.known.has(delivery._id)) return;
    this.known.add(delivery._id);
    const program = this.waiting.get(delivery.programId) ?? new Map<string, Queued[]>();
    const queue = program.get(delivery.endpointId);
    if (queue) queue.push(delivery);
    else program.set(delivery.endpointId, [delivery]);
    this.waiting.set(delivery.programId, program);
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
   * The next delivery of the program whose turn it is, from its first endpoint below its bound; the
   * endpoint and the program then go to the back of their lines. Deliveries of an endpoint at its
   * bound stay where they are.
   */
  private takeNext(): Queued | undefined {
    const { endpointConcurrency } = this.dispatcher.settings;
    for (const [programId, program] of this.waiting) {
      for (const [endpointId, queue] of program) {
        if ((this.inFlightByEndpoint.get(endpointId) ?? 0) >= endpointConcurrency) continue;
        const delivery = queue.shift() as Queued;
        program.delete(endpointId);
        if (queue.length > 0) program.set(endpointId, queue);
        this.waiting.delete(programId);
        if (program.size > 0) this.waiting.set(programId, program);
        return delivery;
      }
    }
    return undefined;
  }

  private launch(delivery: Queued): void {
    const { endpointId } = delivery;
    this.inFlightByEndpoint.set(endpointId, (this.inFlightByEndpoint.get(endpointId) ?? 0) + 1);
    // Each attempt runs in its own delivery's trace (attemptDelivery), never in that of the event
    // or poll that happened to start this worker.
    const attempt = outsideAnyTrace(() => this.claimAndAttempt(delivery))
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

  private async claimAndAttempt(delivery: Queued): Promise<void> {
    const { repositories, settings } = this.dispatcher;
    // The fan-out's lease is used while an attempt still fits in it; after a long wait here, the
    // delivery is claimed like any other (its schedule entry has come due by then).
    const leaseLeft = (delivery.leased?.lockedUntil.getTime() ?? 0) - Date.now();
    const useLease = delivery.leased && leaseLeft > settings.timeoutMs + RECORDING_MARGIN_MS;
    const claimed = useLease ? delivery.leased : await claimDueDelivery(repositories, delivery, leaseMs(settings));
    if (!claimed) return; // another replica took it, or it is no longer pending
    // On a PER_OBJECT endpoint, an earlier revision of the object still to be delivered holds it back.
    const heldUntil = await heldBackUntil(repositories, settings, claimed);
    if (heldUntil) {
      // What held it back ended meanwhile: it is due again now, and on the schedule as such.
      if (await holdBack(repositories, settings, claimed, heldUntil)) this.nudge();
      return;
    }
    // No longer waiting: the backlog, read from the schedule by every replica, stops counting it.
    if (useLease) await startLeasedDelivery(repositories, delivery);
    // Its end may release the next revision of its object: `released` (the constructor) takes that one.
    await attemptDelivery(this.dispatcher, claimed, 'scheduled');
  }
}
