import { randomUUID } from 'node:crypto';
import type { ChannelWrapper } from 'amqp-connection-manager';
import type { Logger } from '../logger';
import { neverTraced } from '../tracing';
import type { EventBus } from './bus';

/**
 * What one dispatcher process holds and has not yet attempted, per program: events taken from the
 * broker and not yet fanned out, and deliveries waiting here for an attempt (first attempts, and due
 * retries loaded from the schedule). Only programs with something waiting are named.
 */
export type BacklogReport = { source: string; programs: Record<string, number> };

/** How often a dispatcher says what it holds; a listener forgets a source that has not spoken for STALE_AFTER_MS. */
export const BACKLOG_NEWS_INTERVAL_MS = 1000;
const STALE_AFTER_MS = 5 * BACKLOG_NEWS_INTERVAL_MS;

/**
 * A fanout exchange beside the events' topic exchange, not durable: news is only worth its freshness,
 * and a broker restart that forgets it loses nothing (the listeners stop shedding until news comes again).
 */
export const backlogNewsExchange = (eventExchange: string) => `${eventExchange}.backlog`;

/**
 * The dispatcher's side: says every second what it holds, per program, on the news exchange. Each
 * replica speaks for itself under an id of its own; the listeners add the replicas up.
 */
export class BacklogNewsPublisher {
  private readonly source = randomUUID();
  private readonly channel: ChannelWrapper;
  private readonly exchange: string;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    bus: EventBus,
    eventExchange: string,
    private readonly read: () => Record<string, number>,
    private readonly logger: Logger,
  ) {
    const exchange = backlogNewsExchange(eventExchange);
    this.exchange = exchange;
    this.channel = bus.openChannel(async (channel) => {
      await channel.assertExchange(exchange, 'fanout', { durable: false });
    });
  }

  start(): void {
    const tell = () => {
      const report: BacklogReport = { source: this.source, programs: this.read() };
      // Not waited for: news that cannot go out now (the broker away) is stale by the next tick anyway.
      // In no trace: each publish would otherwise start one (the amqplib instrumentation's span).
      neverTraced(() =>
        this.channel.publish(this.exchange, '', Buffer.from(JSON.stringify(report)), {
          contentType: 'application/json',
          persistent: false,
        }),
      ).catch((error: unknown) => this.logger.debug({ err: error }, 'backlog news not sent'));
      this.timer = setTimeout(tell, BACKLOG_NEWS_INTERVAL_MS);
      this.timer.unref();
    };
    tell();
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    await this.channel.close().catch(() => undefined);
  }
}

/** The dispatcher's backlog as a service knows it: all programs together, and each program's own. */
export type WebhookBacklog = { total: number; ofProgram: (programId: string) => number };

/**
 * A service's side: listens to the dispatchers' news on a queue of its own (exclusive, gone with the
 * connection, messages expiring as they go stale) and keeps each source's latest report. A source
 * not heard from for a few intervals counts for nothing, so no news means no backlog: a dispatcher
 * that is down, or a broker that is away, never makes a service refuse writes.
 */
export class BacklogNews {
  private readonly latest = new Map<string, { heardAt: number; programs: Record<string, number> }>();
  private channel: ChannelWrapper | undefined;

  constructor(
    private readonly bus: EventBus,
    private readonly eventExchange: string,
    private readonly logger: Logger,
  ) {}

  start(): void {
    const exchange = backlogNewsExchange(this.eventExchange);
    this.channel = this.bus.openChannel(async (channel) => {
      await channel.assertExchange(exchange, 'fanout', { durable: false });
      const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true, durable: false, messageTtl: STALE_AFTER_MS });
      await channel.bindQueue(queue, exchange, '');
      await channel.consume(queue, (message) => message && this.heard(message.content), { noAck: true });
    });
  }

  private heard(content: Buffer): void {
    try {
      const report = JSON.parse(content.toString('utf8')) as BacklogReport;
      if (typeof report.source !== 'string' || typeof report.programs !== 'object' || report.programs === null) return;
      this.latest.set(report.source, { heardAt: Date.now(), programs: report.programs });
    } catch (error) {
      this.logger.debug({ err: error }, 'unreadable backlog news ignored');
    }
  }

  /** What the dispatchers heard from lately hold, added up over them. */
  current(now = Date.now()): WebhookBacklog {
    const programs = new Map<string, number>();
    let total = 0;
    for (const [source, { heardAt, programs: held }] of this.latest) {
      if (now - heardAt > STALE_AFTER_MS) {
        this.latest.delete(source);
        continue;
      }
      for (const [programId, count] of Object.entries(held)) {
        if (typeof count !== 'number' || !Number.isFinite(count)) continue;
        programs.set(programId, (programs.get(programId) ?? 0) + count);
        total += count;
      }
    }
    return { total, ofProgram: (programId) => programs.get(programId) ?? 0 };
  }

  async stop(): Promise<void> {
    await this.channel?.close().catch(() => undefined);
  }
}
