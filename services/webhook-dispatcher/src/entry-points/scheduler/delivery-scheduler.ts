import { outsideAnyTrace, TickAndNudge, Turns, type Turn } from '@affiliate/platform';
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
 * another's deliveries. Each endpoint has at most `endpointConcurrency` requests open (an attempt
 * gives its endpoint's place back once answered, before its outcome is recorded; `maxInFlight` bounds
 * the attempts in all); a hanging subscriber holds its own slots, never another endpoint's.
 */
export class DeliveryScheduler {
  private stopped = true;
  private failing = false;
  /**
   * Waiting deliveries per program and, within it, per endpoint (the lane, bounded at
   * `endpointConcurrency`), in arrival order: the platform's turn-taking worker. Keyed by delivery
   * id, so the schedule and the fan-out never queue one twice while it waits or is in flight.
   */
  private readonly turns: Turns<Queued>;
  private readonly loop: TickAndNudge;
  private readonly attempts = new Set<Promise<void>>();

  private readonly dispatcher: Dispatcher;

  constructor(dispatcher: Dispatcher) {
    // A delivery an attempt here released (the next revision of its object) is taken at once.
    this.dispatcher = { ...dispatcher, released: (delivery) => this.enqueue(delivery) };
    const { settings } = dispatcher;
    this.turns = new Turns<Queued>({
      concurrency: settings.maxInFlight,
      perLane: settings.endpointConcurrency,
      onTurn: (turns) => {
        for (const turn of turns) this.launch(turn);
      },
    });
    this.loop = new TickAndNudge({ everyMs: settings.pollIntervalMs, look: () => this.poll() });
  }

  start(): void {
    this.stopped = false;
    this.loop.start();
  }

  /** New deliveries from the fan-out, leased to this process: their first attempt goes out now, in the program's turn. */
  push(deliveries: ClaimedDelivery[]): void {
    this.enqueueAll(
      deliveries.map((delivery) => ({
        _id: delivery._id,
        programId: delivery.programId,
        endpointId: delivery.endpointId,
        leased: delivery,
      })),
    );
  }

  /** Deliveries waiting here for their first or next attempt, per program (the backlog news the services shed by). */
  waitingPerProgram(): Map<string, number> {
    return this.turns.waitingPerProgram();
  }

  /** Look at the schedule now; polls never overlap. */
  nudge(): void {
    if (this.stopped) return;
    this.loop.nudge();
  }

  /** Stops taking work, cuts the attempts in flight short and waits for them to be recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    // Nothing waiting starts from here on, not even while the poll in flight ends (it queues nothing now).
    this.turns.clear();
    await this.loop.stop();
    this.dispatcher.client.abortAll();
    await Promise.allSettled([...this.attempts]);
    this.dispatcher.circuits.shutdown();
  }

  private async poll(): Promise<void> {
    const { settings, logger, repositories } = this.dispatcher;
    try {
      const known = this.turns.waitingCount + this.turns.runningCount;
      // Enough work in hand already: the schedule is read again once it runs low.
      if (known >= settings.maxInFlight) return;
      // Enough to keep every slot busy; what is queued here already is skipped by enqueueAll(). All
      // of it is queued before any starts, so the programs found take turns over the free slots.
      const due = await findDueDeliveries(repositories, settings.maxInFlight + known);
      this.enqueueAll(due);
      if (this.failing) logger.info('webhook scheduler claiming again');
      this.failing = false;
    } catch (error) {
      if (!this.failing) logger.warn({ err: error }, 'webhook scheduler cannot read the schedule; retrying');
      this.failing = true;
    }
  }

  /** A delivery goes in its program's line, behind its endpoint's; one already here (waiting or in flight) is not queued twice. */
  private enqueue(delivery: Queued): void {
    this.enqueueAll([delivery]);
  }

  /** Deliveries queued together, then started with the programs in turn. */
  private enqueueAll(deliveries: Queued[]): void {
    if (this.stopped) return;
    const fresh = deliveries.filter((delivery) => !this.turns.has(delivery._id));
    this.turns.addAll(
      fresh.map((delivery) => ({ program: delivery.programId, item: delivery, key: delivery._id, lane: delivery.endpointId })),
    );
  }

  private launch(turn: Turn<Queued>): void {
    const delivery = turn.item;
    // Each attempt runs in its own delivery's trace (attemptDelivery), never in that of the event
    // or poll that happened to start this worker.
    // The endpoint's place is given back once its subscriber has answered: `endpointConcurrency`
    // bounds the requests a subscriber has open, and the recording of an outcome (our own write)
    // holds only the attempt's place among all of them (`maxInFlight`).
    const attempt = outsideAnyTrace(() => this.claimAndAttempt(delivery, () => this.turns.leaveLane(turn)))
      .catch((error: unknown) => {
        // The lease runs out and the schedule offers the delivery again: nothing is lost.
        this.dispatcher.logger.warn({ err: error, deliveryId: delivery._id }, 'webhook attempt could not be recorded');
      })
      .finally(() => {
        this.attempts.delete(attempt);
        this.turns.done(turn);
      });
    this.attempts.add(attempt);
  }

  private async claimAndAttempt(delivery: Queued, answered: () => void): Promise<void> {
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
    // No longer waiting: the backlog, read from the schedule by every replica, stops counting it
    // (written beside the attempt's read of its endpoint, before the request).
    const before = useLease ? () => startLeasedDelivery(repositories, delivery) : undefined;
    // Its end may release the next revision of its object: `released` (the constructor) takes that one.
    await attemptDelivery(this.dispatcher, claimed, 'scheduled', { before, answered });
  }
}
