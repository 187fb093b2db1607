import type { Logger } from '@affiliate/platform';
import type { DispatcherSettings } from '../../config';
import type { Repositories } from '../../data-access/repositories';
import { continueBackfills } from '../../domain/backfill-endpoint';

/**
 * The stored events' background work, in every replica: a turn of each backfill in progress every
 * poll interval (a turn queues at most a page per backfill; two replicas queuing the same page make
 * one delivery each), and the retention sweep (stored events, and the delivery orders of objects
 * unchanged as long) every EVENT_SWEEP_INTERVAL, since the local MongoDB-compatible server runs no
 * TTL monitor (on MongoDB the TTL index has usually done it).
 */
export class EventStoreTasks {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private lastSweep = 0;

  constructor(
    private readonly repositories: Repositories,
    private readonly settings: DispatcherSettings,
    private readonly logger: Logger,
    /** Told when a turn queued deliveries, so that they go out without waiting for the next poll. */
    private readonly queued: () => void,
  ) {}

  start(): void {
    const tick = () => {
      if (!this.running) {
        this.running = this.turn().finally(() => {
          this.running = undefined;
        });
      }
      this.timer = setTimeout(tick, this.settings.pollIntervalMs);
      this.timer.unref();
    };
    tick();
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.running) await this.running;
  }

  private async turn(): Promise<void> {
    try {
      if ((await continueBackfills(this.repositories, this.settings)) > 0) this.queued();
    } catch (error) {
      // The cursor did not move: the next turn queues the same page again, which duplicates nothing.
      this.logger.warn({ err: error }, 'could not continue the webhook backfills');
    }
    if (Date.now() - this.lastSweep < this.settings.eventSweepIntervalMs) return;
    this.lastSweep = Date.now();
    try {
      const deleted = await this.repositories.events.deleteExpiredAcrossPrograms(this.settings.eventRetentionMs);
      if (deleted > 0) this.logger.info({ deleted }, 'deleted events past their retention');
      // The orders of objects that have not changed for as long (ObjectOrderDocument.expiresAt).
      const orders = await this.repositories.objectOrders.deleteExpiredAcrossPrograms();
      if (orders > 0) this.logger.info({ deleted: orders }, 'deleted the delivery orders of objects unchanged for the retention');
    } catch (error) {
      this.logger.warn({ err: error }, 'could not delete expired events');
    }
  }
}
