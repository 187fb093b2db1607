import { acceptedEventDataSchemaOf, EventEnvelope } from '@affiliate/contracts';
import type { ZodError } from 'zod';
import amqp, { type AmqpConnectionManager, type ChannelWrapper } from 'amqp-connection-manager';
import { context, trace } from '@opentelemetry/api';
import type { Channel, ConfirmChannel, ConsumeMessage } from 'amqplib';
import type { FairShare } from '../fair-share';
import { withRequestContext, type Logger } from '../logger';
import type { ConsumerMetrics } from '../metrics';
import { contextOf, handlingContextOf, markSpanFailed } from '../tracing';
import type { ClaimOutcome, ProcessedEvents } from './processed-events';

export type EventHandler = (event: EventEnvelope) => Promise<void>;

export type SubscriptionOptions = {
  /** Durable queue of this consumer, e.g. `affiliate.link-stats`. */
  queue: string;
  /** Routing keys (event types) bound to the queue; `#` and `*` wildcards allowed. */
  eventTypes: string[];
  handler: EventHandler;
  /** Remembers handled event ids so that a redelivery is processed once. */
  processedEvents: ProcessedEvents;
  prefetch?: number;
  /**
   * Handles events of many programs in turn instead of in queue order: the broker hands over up to
   * `prefetch` messages, and their claims and handlers run `FairShare`'s few at a time, one program
   * at a time. So one program's burst in the queue does not hold back another program's events.
   */
  fairShare?: FairShare;
  /**
   * Events of one program held in the window (`prefetch`) at once. One more of that program is put
   * back at the end of the queue (through the retry queue, its attempts unspent) instead of waiting
   * here, so one program's backlog cannot fill the window all programs share while the others'
   * events wait in the broker behind it. Unlimited when not given.
   */
  maxHeldPerProgram?: number;
  /** Attempts before the message goes to `<queue>.dead`. */
  maxAttempts?: number;
  /** Delay before a failed message is tried again. */
  retryDelayMs?: number;
};

const ATTEMPT_HEADER = 'x-attempt';
/** Pause before a consumer whose channel the broker closed takes a new connection. */
const RECOVER_DELAY_MS = 1000;

export type EventBusOptions = {
  /** One broker URL, or the nodes of a cluster as a comma-separated list (`AMQP_URL`, see brokerUrls). */
  url: string;
  exchange: string;
  logger: Logger;
  publishTimeoutMs?: number;
  queueType?: 'classic' | 'quorum';
  metrics?: ConsumerMetrics;
};

/**
 * The nodes of `AMQP_URL`: one URL, or several separated by commas (the nodes of a RabbitMQ cluster).
 * The bus connects to the first that answers and, when that node goes away, to the next in turn.
 */
export function brokerUrls(setting: string): string[] {
  return setting
    .split(',')
    .map((url) => url.trim())
    .filter((url) => url.length > 0);
}

/**
 * Arguments of the three queues of a subscription. On a cluster (`quorum`) each is a replicated
 * quorum queue, and the retry queue hands expired messages back with at-least-once dead-lettering:
 * the default (at-most-once) drops a message whose way back fails, e.g. while the consumer queue
 * elects a new leader after a node died. At-least-once requires `reject-publish` overflow.
 */
function queueArguments(queueType: 'classic' | 'quorum') {
  const type = { 'x-queue-type': queueType };
  return {
    queue: type,
    retry: queueType === 'quorum' ? { ...type, 'x-dead-letter-strategy': 'at-least-once', 'x-overflow': 'reject-publish' } : type,
    dead: type,
  };
}

/**
 * The bus: one durable topic exchange, routing key = event type. Publishing waits for the broker's
 * confirm; consumers ack only after their handler succeeded. Connection and channels come back by
 * themselves after the broker restarts (amqp-connection-manager re-runs each channel's setup), on
 * the next node of the list when `url` names a cluster.
 */
export class EventBus {
  private readonly connection: AmqpConnectionManager;
  private readonly publisher: ChannelWrapper;
  /** The publisher's open channel, published on directly (see publish); undefined while reconnecting. */
  private publishChannel: ConfirmChannel | undefined;
  private readonly consumers: ChannelWrapper[] = [];
  private connected = false;
  private closing = false;
  private recovering = false;
  /** Set by stopConsuming: messages not yet in a handler go back to the queue untouched. */
  private consuming = true;
  /** Messages taken from the broker and not yet acked or handed back, so a stop can wait for them. */
  private readonly inFlight = new Set<Promise<void>>();
  /** The live consumer of each subscription (replaced when a reconnect runs its setup again). */
  private readonly consumerTags = new Map<string, { channel: ConfirmChannel; consumerTag: string }>();
  /** Events of each program in each subscription's window now, by the subscription's name (heldPerProgram). */
  private readonly windows = new Map<string, ReadonlyMap<string, number>>();

  constructor(private readonly options: EventBusOptions) {
    this.connection = amqp.connect(brokerUrls(options.url), { heartbeatIntervalInSeconds: 5, reconnectTimeInSeconds: 1 });
    this.connection.on('connect', ({ url }) => {
      this.connected = true;
      options.logger.info({ node: redactedUrl(url) }, 'RabbitMQ connected');
    });
    this.connection.on('disconnect', ({ err }) => {
      if (this.connected) options.logger.warn({ err }, 'RabbitMQ disconnected; reconnecting');
      this.connected = false;
    });
    this.connection.on('connectFailed', ({ err }) => options.logger.warn({ err: err.message }, 'RabbitMQ not reachable; retrying'));
    this.publisher = this.connection.createChannel({
      confirm: true,
      setup: async (channel: ConfirmChannel) => {
        await channel.assertExchange(options.exchange, 'topic', { durable: true });
        this.publishChannel = channel;
        channel.once('close', () => {
          if (this.publishChannel === channel) this.publishChannel = undefined;
        });
      },
    });
    // A setup interrupted by the broker going away is retried on reconnect; it is not a crash.
    this.publisher.on('error', (err) => options.logger.warn({ err }, 'publisher channel error'));
  }

  /** Waits for the broker up to a bound; the outbox keeps writes safe if it is still away after that. */
  async waitForConnect(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const connected = this.publisher.waitForConnect().then(() => true);
    const outcome = await Promise.race([connected, timeout]);
    clearTimeout(timer);
    return outcome;
  }

  isConnected(): boolean {
    return this.connected;
  }

  /**
   * Every subscription has a consumer the broker delivers to right now: what readiness means for a
   * component that consumes. A live connection is not enough: a consumer the broker cancelled (its
   * queue deleted, a quorum queue without a leader), or whose channel it closed (a declare refused),
   * receives nothing while the connection stays up.
   */
  consumersAttached(): boolean {
    return this.consuming && this.connected && this.consumerTags.size === this.consumers.length;
  }

  /** Resolves once the broker has confirmed the event; rejects if that does not happen in time. */
  async publish(event: EventEnvelope): Promise<void> {
    const timeoutMs = this.options.publishTimeoutMs ?? 5000;
    // The envelope's own `headers` were for the outbox (the trace it was caused in); subscribers
    // never see them. The amqplib instrumentation puts the publish's trace in the message's headers.
    const { headers: _stored, ...body } = event;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`RabbitMQ did not confirm ${event.type} ${event.id} within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([this.publishConfirmed(event, body), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Publishes a batch and waits for the broker's confirms once, under one timeout: the channel keeps
   * their order, and the broker confirms them together (its acks cover many messages at a time).
   * Each message is published in the trace its event was caused in (the traceparent stored in the
   * envelope's headers), so the amqplib instrumentation's producer span is that request's child.
   * Rejects if any of them is not confirmed in time; then all of them are published again later.
   */
  async publishAll(events: EventEnvelope[]): Promise<void> {
    if (events.length === 0) return;
    const timeoutMs = this.options.publishTimeoutMs ?? 5000;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`RabbitMQ did not confirm ${events.length} events within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      if (!this.publishChannel) await Promise.race([this.publisher.waitForConnect(), timeout]);
      const channel = this.publishChannel;
      if (!channel) throw new Error('RabbitMQ publisher channel is not open');
      const confirms = events.map((event) => {
        const { headers, ...body } = event;
        return context.with(contextOf(headers), () => this.sendOn(channel, event, body));
      });
      await Promise.race([Promise.all(confirms), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Straight on the open channel, not through amqp-connection-manager's publish: that one queues
   * the message and sends it from its worker, in the context of whichever publish started the
   * worker (or of the reconnect), so the amqplib instrumentation's producer span would take another
   * event's trace as its parent. Called here, the channel's publish runs in the caller's context,
   * which the relay sets to the trace stored with the event. A channel that closes before the
   * broker confirms fails the publish, and the relay tries the event again.
   */
  private async publishConfirmed(event: EventEnvelope, body: Omit<EventEnvelope, 'headers'>): Promise<void> {
    if (!this.publishChannel) await this.publisher.waitForConnect();
    const channel = this.publishChannel;
    if (!channel) throw new Error('RabbitMQ publisher channel is not open');
    await this.sendOn(channel, event, body);
  }

  /** One message on the channel; resolves at the broker's confirm (ack), rejects at its nack or the channel's close. */
  private sendOn(channel: ConfirmChannel, event: EventEnvelope, body: Omit<EventEnvelope, 'headers'>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      // Refused before the channel sees it: amqplib queues the confirm callback first and throws while
      // encoding after, so that callback would stay queued and answer for the next message, and every
      // later publish on the channel would wait for the confirm of the one after it.
      const timestamp = Math.floor(Date.parse(event.occurredAt) / 1000);
      const unsendable = unsendableBecause(event, timestamp);
      if (unsendable) throw new Error(`Event ${String(event.id).slice(0, 64)} cannot be published: ${unsendable}`);
      channel.publish(
        this.options.exchange,
        event.type,
        Buffer.from(JSON.stringify(body)),
        {
          persistent: true,
          messageId: event.id,
          contentType: 'application/json',
          timestamp,
          headers: {},
        },
        (error) => (error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve()),
      );
    });
  }

  async subscribe(options: SubscriptionOptions): Promise<void> {
    const logger = this.options.logger;
    // Queues are named under the exchange, so separate deployments (and test files) never share one.
    const queue = `${this.options.exchange}.${options.queue}`;
    const retryQueue = `${queue}.retry`;
    const deadQueue = `${queue}.dead`;
    const maxAttempts = options.maxAttempts ?? 5;
    // Labelled by the subscription's own name, not the exchange-prefixed queue: a constant of the code.
    const metrics = this.options.metrics;
    const name = options.queue;

    /** Events of each program in the window now (waiting for their turn or being handled). */
    const held = new Map<string, number>();
    this.windows.set(name, held);
    const onMessage = async (channel: ConfirmChannel, message: ConsumeMessage | null) => {
      if (!message) {
        // The broker cancelled the consumer (its queue was deleted or became unavailable): nothing
        // would ever consume again on this connection, so take a new one, which runs setup again.
        if (this.consumerTags.get(queue)?.channel === channel) this.consumerTags.delete(queue);
        this.recover(queue, 'the broker cancelled the consumer');
        return;
      }
      // The amqplib instrumentation calls this handler inside its consumer span (continuing the
      // publisher's trace from the headers; it ends at ack, nack or reject). A message that carries
      // no trace is handled in none, its copies to the retry and dead-letter queues included, when
      // nothing records spans (tracing.ts, `startTracesHere`).
      const messageContext = handlingContextOf(message.properties.headers);
      const attempt = Number(message.properties.headers?.[ATTEMPT_HEADER] ?? 1);
      // Seen before: the broker redelivers it (unacked on a channel that died), or it is back from the
      // retry queue, whose expiry marks it with x-death (a claim that failed keeps its attempt number).
      if (message.fields.redelivered || attempt > 1 || message.properties.headers?.['x-death'] !== undefined) metrics?.redelivered(name);
      const outcome = parseEvent(message.content);
      if (!outcome.event) {
        // One behaviour for every consumer: a message that is not an event of the catalogue, or whose
        // data does not fit its type, is dead-lettered with the field that is wrong.
        logger.error(
          { queue, messageId: message.properties.messageId, field: outcome.field, problem: outcome.problem },
          `poison message: ${outcome.problem}; dead-lettered`,
        );
        await context.with(messageContext, () => sendAndConfirm(channel, deadQueue, message, attempt));
        channel.ack(message);
        metrics?.deadLettered(name, 'poison');
        return;
      }
      const parsed = outcome.event;
      const heldNow = held.get(parsed.programId) ?? 0;
      if (options.maxHeldPerProgram !== undefined && heldNow >= options.maxHeldPerProgram) {
        // Over its share of the window: back of the queue, making room for other programs' events.
        await context.with(messageContext, () => sendAndConfirm(channel, retryQueue, message, attempt));
        channel.ack(message);
        return;
      }
      held.set(parsed.programId, heldNow + 1);
      // FairShare runs a turn from whichever message finished last, so the turn is bound back to
      // this message's context: our own queue, which no instrumentation knows about.
      trace
        .getSpan(messageContext)
        ?.updateName(`process ${queue}`)
        .setAttributes({
          ...messagingAttributes(this.options.exchange, parsed),
          'messaging.consumer.group.name': queue,
          'messaging.rabbitmq.attempt': attempt,
        });
      const inTurn = <T>(work: () => Promise<T>) => {
        const bound = context.bind(messageContext, work);
        return options.fairShare ? options.fairShare.run(parsed.programId, bound) : bound();
      };
      await inTurn(() =>
        withRequestContext({ requestId: parsed.id, programId: parsed.programId }, async () => {
          // Stopping: not started, so handed back whole for another replica (or the next start).
          if (!this.consuming) return channel.nack(message, false, true);
          let claim: ClaimOutcome;
          try {
            claim = await options.processedEvents.claim(parsed.id);
          } catch (error) {
            // The database is away: the message must not sit unacked on a live channel, where the
            // broker never redelivers it. It comes back after the retry delay, its attempts unspent.
            logger.warn({ err: error, eventId: parsed.id, type: parsed.type }, 'event claim failed; retrying later');
            await sendAndConfirm(channel, retryQueue, message, attempt);
            metrics?.retried(name, 'claim_failed');
            return channel.ack(message);
          }
          if (claim === 'done') {
            metrics?.consumed(name, 'duplicate');
            return channel.ack(message);
          }
          if (claim === 'busy') {
            // Another copy is in a handler right now; look again after the retry delay.
            await sendAndConfirm(channel, retryQueue, message, attempt);
            metrics?.retried(name, 'in_progress_elsewhere');
            return channel.ack(message);
          }
          try {
            await options.handler(parsed);
            await options.processedEvents.complete(parsed.id);
            channel.ack(message);
            metrics?.consumed(name, 'handled');
          } catch (error) {
            await options.processedEvents.release(parsed.id).catch(() => undefined);
            const target = attempt >= maxAttempts ? deadQueue : retryQueue;
            logger.warn({ err: error, eventId: parsed.id, type: parsed.type, attempt, queue: target }, 'event handler failed');
            // The copy is confirmed before the original is acked, so a crash in between duplicates
            // the message (harmless: consumers are idempotent) and never loses it.
            markSpanFailed(error);
            await sendAndConfirm(channel, target, message, attempt + 1);
            channel.ack(message);
            if (target === deadQueue) metrics?.deadLettered(name, 'attempts_exhausted');
            else metrics?.retried(name, 'handler_failed');
          }
        }),
      ).finally(() => {
        const left = (held.get(parsed.programId) ?? 1) - 1;
        if (left > 0) held.set(parsed.programId, left);
        else held.delete(parsed.programId);
      });
    };

    const consumer = this.connection.createChannel({
      confirm: true,
      setup: async (channel: ConfirmChannel) => {
        // A channel the broker closes while the connection lives (a quorum queue without a leader
        // refusing a declare or a consume during an election) is never reopened by the connection
        // manager, which reopens channels only on reconnect; so the consumer takes a new connection.
        channel.once('error', (err: Error) => this.recover(queue, `channel closed by the broker: ${err.message}`));
        // Not attached from the moment its channel goes (readiness), until a setup consumes again.
        channel.once('close', () => {
          if (this.consumerTags.get(queue)?.channel === channel) this.consumerTags.delete(queue);
        });
        await channel.assertExchange(this.options.exchange, 'topic', { durable: true });
        const queueArgs = queueArguments(this.options.queueType ?? 'classic');
        await channel.assertQueue(queue, { durable: true, arguments: queueArgs.queue });
        await channel.assertQueue(retryQueue, {
          durable: true,
          arguments: queueArgs.retry,
          messageTtl: options.retryDelayMs ?? 1000,
          deadLetterExchange: '',
          deadLetterRoutingKey: queue,
        });
        await channel.assertQueue(deadQueue, { durable: true, arguments: queueArgs.dead });
        for (const eventType of options.eventTypes) {
          await channel.bindQueue(queue, this.options.exchange, eventType);
        }
        await channel.prefetch(options.prefetch ?? 16);
        const { consumerTag } = await channel.consume(queue, (message) => {
          const handled = onMessage(channel, message).catch((error: unknown) => {
            // The channel died mid-message: the broker redelivers it once we are back.
            logger.warn({ err: error, queue }, 'message left unacknowledged; the broker will redeliver it');
          });
          this.inFlight.add(handled);
          void handled.finally(() => this.inFlight.delete(handled));
        });
        this.consumerTags.set(queue, { channel, consumerTag });
      },
    });
    consumer.on('error', (err) => logger.warn({ err, queue }, 'consumer channel error'));
    this.consumers.push(consumer);
    await consumer.waitForConnect();
  }

  /** Events of each program the subscription named `queue` holds now: taken from the broker, not yet handled. */
  heldPerProgram(queue: string): ReadonlyMap<string, number> {
    return this.windows.get(queue) ?? new Map();
  }

  /**
   * A channel for messages that are not domain events (the dispatcher's backlog news): no confirms,
   * and its setup runs again on every reconnect, like the consumers'. Closed with the connection.
   */
  openChannel(setup: (channel: Channel) => Promise<void>): ChannelWrapper {
    const channel = this.connection.createChannel({ confirm: false, setup });
    channel.on('error', (err) => this.options.logger.warn({ err }, 'channel error'));
    return channel;
  }

  /**
   * A new connection (to the next node of the list), on which every channel's setup runs again.
   * After a pause, and once for every channel that asks meanwhile: a refusal that lasts (a queue
   * declared elsewhere with other arguments) retries once a second instead of in a tight loop.
   */
  private recover(queue: string, reason: string): void {
    // A stop cancels the consumers itself: nothing to recover from.
    if (this.closing || !this.consuming) return;
    this.options.logger.warn({ queue }, `${reason}; reconnecting`);
    if (this.recovering) return;
    this.recovering = true;
    setTimeout(() => {
      this.recovering = false;
      if (!this.closing) this.connection.reconnect();
    }, RECOVER_DELAY_MS).unref();
  }

  /**
   * The first step of a graceful stop, before the database goes: handlers already running finish
   * (and ack, or hand their message to the retry queue), messages not yet started go back to the
   * queue, then the consumer channels close. Closing the database under a running handler instead
   * failed it half-way and left its event claimed, so the event waited out the claim's lease
   * (a minute) before another replica could handle it.
   */
  async stopConsuming(): Promise<void> {
    this.consuming = false;
    // No new deliveries to this process; what it holds unacked stays its own until handled or handed back.
    await Promise.allSettled([...this.consumerTags.values()].map(({ channel, consumerTag }) => channel.cancel(consumerTag)));
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    await Promise.allSettled(this.consumers.map((consumer) => consumer.close()));
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.stopConsuming();
    await this.publisher.close().catch(() => undefined);
    await this.connection.close();
  }
}

type ParseOutcome = { event: EventEnvelope; field?: never; problem?: never } | { event?: never; field: string; problem: string };

/** The envelope, then its data against the catalogue's schema for its type (contracts/event-catalogue). */
function parseEvent(content: Buffer): ParseOutcome {
  let json: unknown;
  try {
    json = JSON.parse(content.toString('utf8'));
  } catch {
    return { field: '(body)', problem: 'not JSON' };
  }
  const envelope = EventEnvelope.safeParse(json);
  if (!envelope.success)
    return {
      field: fieldOf(envelope.error),
      problem: `not an event envelope (${fieldOf(envelope.error)}: ${envelope.error.issues[0]?.message})`,
    };
  const data = acceptedEventDataSchemaOf(envelope.data.type).safeParse(envelope.data.data);
  if (!data.success) {
    const field = `data.${fieldOf(data.error)}`;
    return { field, problem: `${envelope.data.type} data does not fit its schema (${field}: ${data.error.issues[0]?.message})` };
  }
  // Checked, not rewritten: the handler gets the data as sent.
  return { event: envelope.data };
}

/** The node's address without its credentials, for logs. */
function redactedUrl(url: unknown): string {
  try {
    const parsed = new URL(typeof url === 'string' ? url : String((url as { url?: string } | undefined)?.url));
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return 'unknown';
  }
}

/**
 * The current messaging convention's attributes for a consumer span (bounded values only: no
 * payload), which the instrumentation names in the older convention only; with them the span's name
 * `process <queue>` (the convention's `{operation} {destination}`).
 */
function messagingAttributes(exchange: string, event: Pick<EventEnvelope, 'id' | 'type'>): Record<string, string> {
  return {
    'messaging.system': 'rabbitmq',
    'messaging.operation.name': 'process',
    'messaging.operation.type': 'process',
    'messaging.destination.name': exchange,
    'messaging.rabbitmq.destination.routing_key': event.type,
    'messaging.message.id': event.id,
  };
}

const fieldOf = (error: ZodError) => error.issues[0]?.path.join('.') || '(root)';

function sendAndConfirm(channel: ConfirmChannel, queue: string, message: ConsumeMessage, attempt: number): Promise<void> {
  return new Promise((resolve, reject) => {
    channel.sendToQueue(
      queue,
      message.content,
      { ...message.properties, persistent: true, headers: { ...message.properties.headers, [ATTEMPT_HEADER]: attempt } },
      (error) => (error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve()),
    );
  });
}

/** AMQP's short strings (the routing key, the message id) carry at most 255 bytes. */
const SHORT_STRING_BYTES = 255;

/**
 * Why AMQP cannot carry the event as a message, if it cannot: its type is the routing key and its id
 * the message id (short strings), its `occurredAt` the message's timestamp (a whole number).
 */
function unsendableBecause(event: EventEnvelope, timestamp: number): string | undefined {
  if (typeof event.type !== 'string' || Buffer.byteLength(event.type) > SHORT_STRING_BYTES)
    return `its type is not a string of at most ${SHORT_STRING_BYTES} bytes`;
  if (typeof event.id !== 'string' || Buffer.byteLength(event.id) > SHORT_STRING_BYTES)
    return `its id is not a string of at most ${SHORT_STRING_BYTES} bytes`;
  if (!Number.isFinite(timestamp)) return 'its occurredAt is not a date';
  return undefined;
}
