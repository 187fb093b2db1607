import { randomUUID } from 'node:crypto';
import { currentTraceCarrier, GroupCommit, isDatabaseUnavailable, outsideAnyTrace, type TraceCarrier } from '@affiliate/platform';
import { isPublicEventType, type EventEnvelope, type PublicEventType, type WebhookPayload } from '@affiliate/contracts';
import type { DispatcherSettings } from '../config';
import type { Repositories } from '../data-access/repositories';
import { deliveryIdOf, type ClaimedDelivery } from '../data-access/webhook-deliveries';
import { firstAttemptLeaseMs } from './attempt-delivery';
import { enterOrder } from './ordered-delivery';

/** A public event ready to be fanned out: its stored form and what each of its deliveries carries. */
export type EventToFanOut = {
  event: EventEnvelope & { type: PublicEventType };
  payload: WebhookPayload;
  body: string;
  /** The consumption's trace (itself continuing the publisher's): each attempt continues it. */
  traceContext: TraceCarrier | undefined;
};

/** The deliveries created for one event, leased for their first attempt; `again` when the event had been fanned out before. */
export type FannedOut = { created: ClaimedDelivery[]; again: boolean };

/**
 * The events of one program are fanned out in batches (group commit): the events that arrive while a
 * batch is written share its writes (the events, the schedule entries, the deliveries: one command
 * each), and each event's message is acknowledged once its batch is stored. So a burst costs a few
 * writes per batch rather than per event, and an idle system answers as fast as before.
 */
export type FanOut = GroupCommit<EventToFanOut, FannedOut | { failure: unknown }>;

export function fanOutIntake(repositories: Repositories, settings: DispatcherSettings): FanOut {
  // Outside any trace, as the outbox relay's batches: a batch would otherwise run in the trace of
  // whichever event came first, and its writes belong to none of its events alone (each delivery
  // carries its own event's trace).
  return new GroupCommit(
    (programId, events) => outsideAnyTrace(() => fanOutEachOnFailure(repositories, settings, programId, events)),
    FAN_OUT_BATCHES,
  );
}

/**
 * A batch that fails with the database there is fanned out again event by event, so that one
 * event's failure fails only its own message (retried, then dead-lettered alone) and never its
 * batch-mates'. With the database away all fail alike, and every message is retried as it is.
 */
async function fanOutEachOnFailure(
  repositories: Repositories,
  settings: DispatcherSettings,
  programId: string,
  events: EventToFanOut[],
): Promise<(FannedOut | { failure: unknown })[]> {
  try {
    return await fanOutEvents(repositories, settings, programId, events);
  } catch (error) {
    if (events.length === 1 || isDatabaseUnavailable(error)) throw error;
    return Promise.all(
      events.map((event) =>
        fanOutEvents(repositories, settings, programId, [event]).then(
          ([fannedOut]) => fannedOut as FannedOut,
          (failure: unknown) => ({ failure }),
        ),
      ),
    );
  }
}

/**
 * As many events as arrive while a batch is written, up to what one command carries comfortably
 * (50 endpoints each make 3,200 deliveries); two batches of a program in flight, so that one reads
 * while the other writes.
 */
const FAN_OUT_BATCHES = { maxBatch: 64, maxInFlight: 2 };

/**
 * One event on the bus. Internal events are skipped (never delivered nor stored); a public one joins
 * its program's next batch (`fanOutEvents`). Resolves once its deliveries are stored, and so before
 * the broker message is acked: `'duplicate'` when it had been fanned out before (a redelivery).
 * Its trace is taken here, inside the consumption of its message, for the batch runs in one context.
 */
export async function fanOutEvent(intake: FanOut, event: EventEnvelope): Promise<FannedOut> {
  if (!isPublicEventType(event.type)) return { created: [], again: false };
  const payload = webhookPayloadOf(event, event.type);
  const toFanOut = { event: { ...event, type: event.type }, payload, body: JSON.stringify(payload), traceContext: currentTraceCarrier() };
  const outcome = await intake.submit(event.programId, toFanOut);
  if ('failure' in outcome) throw outcome.failure;
  return outcome;
}

/**
 * Filtering at the endpoint: one pending delivery per active endpoint of the program subscribed to
 * each event. Public events are stored once, by id, for GET /events. Every write is idempotent by
 * its keys (the event's id; a delivery's and its schedule entry's id is the (event, endpoint)
 * pair's), so an event fanned out twice, one copy beside the other or after a crash half-way, makes
 * each delivery once and needs no claim of its own: a redelivered event finds its deliveries there.
 *
 * Each new delivery is stored already leased to this process, for its first attempt, which the
 * caller makes at once with the returned documents: no claim, no read back. Its schedule entry is
 * due when the lease ends, so a crash before that attempt strands nothing, and no other sender
 * takes it meanwhile; it is marked waiting until that attempt starts (the backlog gauges).
 */
export async function fanOutEvents(
  repositories: Repositories,
  settings: DispatcherSettings,
  programId: string,
  events: EventToFanOut[],
): Promise<FannedOut[]> {
  // Kept whether or not an endpoint takes them (GET /events, backfills, replays), before any delivery.
  const recorded = await repositories.events.recordAll(
    programId,
    events.map(({ payload, body }) => ({ payload, body })),
    settings.eventRetentionMs,
  );
  const types = [...new Set(events.map(({ event }) => event.type))];
  const subscribed = new Map(
    await Promise.all(
      types.map(
        async (type) => [type, await repositories.endpoints.subscribedTo(programId, type, settings.maxDeliveriesPerEvent)] as const,
      ),
    ),
  );
  const now = new Date();
  const lockedUntil = new Date(now.getTime() + firstAttemptLeaseMs(settings));
  const leasedPerEvent = events.map(({ event, body, traceContext }) => {
    // Events without a revision (stored in an outbox before revisions, or about an object other than
    // the one written) take no place in an order: they go out when due, as on any endpoint.
    const order = event.revision === undefined ? {} : { objectKey: objectKeyOf(event), revision: event.revision };
    return (subscribed.get(event.type) ?? []).map(({ _id: endpointId, ordering }): ClaimedDelivery => ({
      _id: deliveryIdOf(event.id, endpointId),
      programId,
      endpointId,
      eventId: event.id,
      eventType: event.type,
      body,
      ...(ordering === 'PER_OBJECT' ? order : {}),
      ...(traceContext ? { traceContext } : {}),
      status: 'pending',
      attempts: [],
      scheduledAttempts: 0,
      nextAttemptAt: now,
      lockedUntil,
      lockToken: randomUUID(),
      createdAt: now,
      updatedAt: now,
    }));
  });
  // An event stored before (a redelivery) may have its deliveries already, some of them ended long
  // ago: those are left alone, so that no schedule entry is written again for an ended delivery
  // (it would count as backlog until the sender discarded it). One read, only for such events.
  const existing = await repositories.deliveries.existing(
    programId,
    leasedPerEvent.flatMap((deliveries, index) => (recorded[index] ? [] : deliveries.map((delivery) => delivery._id))),
  );
  // Each delivery with the event it is of: the same event twice in one batch makes its deliveries
  // twice, and only the copy whose documents were stored may send them (its lock token).
  const toStore = leasedPerEvent.flatMap((deliveries, index) =>
    deliveries.filter((delivery) => !existing.has(delivery._id)).map((delivery) => ({ index, delivery })),
  );
  const leased = toStore.map(({ delivery }) => delivery);
  // One write each for all the batch's deliveries. Scheduled first: a crash between the two writes
  // leaves entries whose deliveries the redelivered event creates (or, if it never comes, entries the
  // sender discards).
  await repositories.schedule.ensureAll(programId, leased, lockedUntil, now);
  const stored = await repositories.deliveries.insertNew(programId, leased);
  // Not stored: a copy of the event fanned out beside this one stored it first (and sends it).
  const fannedOut: FannedOut[] = events.map((_event, index) => ({ created: [], again: !recorded[index] }));
  toStore.forEach(({ index, delivery }, position) => {
    const outcome = fannedOut[index] as FannedOut;
    if (!stored[position]) return;
    outcome.created.push(delivery);
    outcome.again = false;
  });
  // Taken into its object's order only once stored, so a redelivered event never makes an ended
  // delivery pending there again; a crash in between leaves its successor to the gap's bounded wait.
  // One at a time: two revisions of one object in a batch would otherwise race to create its order
  // (an upsert's duplicate key). Only deliveries to PER_OBJECT endpoints write here.
  for (const { created } of fannedOut) for (const delivery of created) await enterOrder(repositories, settings, delivery);
  return fannedOut;
}

/**
 * The body subscribers receive: the specification's four fields, then the object's revision and, on
 * `*.updated`, what the change altered, when the event carries them (not on events stored before).
 */
export function webhookPayloadOf(event: EventEnvelope, type: PublicEventType): WebhookPayload {
  return {
    id: event.id,
    event: type,
    createdAt: event.occurredAt,
    data: event.data,
    ...(event.revision === undefined ? {} : { revision: event.revision }),
    ...(event.previousAttributes === undefined ? {} : { previousAttributes: event.previousAttributes }),
  };
}

/** The object an event is about, across families: `sale:<id>`. */
export const objectKeyOf = (event: EventEnvelope): string => `${event.type.split('.')[0]}:${String(event.data.id)}`;
