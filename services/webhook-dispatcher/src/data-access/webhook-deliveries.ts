import { createHash, randomUUID } from 'node:crypto';
import type { DeliveryAttempt, DeliveryStatus, WebhookDelivery } from '@affiliate/contracts';
import {
  byIdInProgram,
  findPage,
  GroupCommit,
  SharedInserts,
  insertOnce,
  uuidFromDigest,
  withinPeriod,
  type PageRequest,
  type Period,
  type TraceCarrier,
} from '@affiliate/platform';
import { Schema, type Connection, type FilterQuery, type Model } from 'mongoose';

export type StoredAttempt = {
  /**
   * Internal, never shown: tells this attempt apart from every other in the log (a batch's write read
   * back). Absent on attempts recorded before it.
   */
  attemptId?: string;
  at: Date;
  statusCode: number | null;
  latencyMs: number;
  responseExcerpt: string | null;
  responseBytes: number | null;
  error: string | null;
  /** The trace the attempt ran in; absent on attempts recorded before tracing, and null where no trace was started (tracing.ts, `startTracesHere`). */
  traceId?: string | null;
};

/** An attempt being recorded now: it carries its id. */
export type NewAttempt = StoredAttempt & { attemptId: string };

export type WebhookDeliveryDocument = {
  /** Derived from (eventId, endpointId): the unique key that makes fan-out idempotent. */
  _id: string;
  programId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  /** The request body, serialised once, so that every attempt sends the same bytes. */
  body: string;
  /**
   * Set on deliveries to a PER_OBJECT endpoint of events that carry a revision: the object
   * (`sale:<id>`) and its revision, which order the deliveries of one object to one endpoint.
   * Absent elsewhere: such a delivery goes out whenever it is due.
   */
  objectKey?: string;
  revision?: number;
  status: DeliveryStatus;
  /**
   * The W3C trace context of the event's consumption: every scheduled attempt continues it, so a
   * retry hours later is still in the trace of the request that caused the event. Absent on
   * deliveries stored before tracing.
   */
  traceContext?: TraceCarrier;
  attempts: StoredAttempt[];
  /** Attempts made by the schedule (manual re-sends do not count): the position in the retry schedule. */
  scheduledAttempts: number;
  nextAttemptAt: Date | null;
  /** Lease of the process sending it right now; a crashed sender's lease simply runs out. */
  lockedUntil: Date;
  lockToken: string | null;
  createdAt: Date;
  updatedAt: Date;
};

/** Attempts kept per delivery: the schedule's ten plus a generous number of manual re-sends. */
export const KEPT_ATTEMPTS = 50;

const attemptSchema = new Schema<StoredAttempt>(
  {
    attemptId: { type: String, required: false },
    at: { type: Date, required: true },
    statusCode: { type: Number, default: null },
    latencyMs: { type: Number, required: true },
    responseExcerpt: { type: String, default: null },
    responseBytes: { type: Number, default: null },
    error: { type: String, default: null },
    traceId: { type: String, default: null },
  },
  { _id: false },
);

const schema = new Schema<WebhookDeliveryDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    endpointId: { type: String, required: true },
    eventId: { type: String, required: true },
    eventType: { type: String, required: true },
    body: { type: String, required: true },
    objectKey: { type: String, required: false },
    revision: { type: Number, required: false },
    status: { type: String, required: true },
    traceContext: { type: Schema.Types.Mixed, default: undefined },
    attempts: { type: [attemptSchema], default: [] },
    scheduledAttempts: { type: Number, default: 0 },
    nextAttemptAt: { type: Date, default: null },
    lockedUntil: { type: Date, required: true },
    lockToken: { type: String, default: null },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false },
);
// Which index serves which filter of the delivery log (the program first, ending in the list's order,
// createdAt then _id, so a page is read in order and stops at its limit; a createdAt period is a range
// on the createdAt that follows): none or a period, the first; endpointId, eventId, status and
// eventType, their own (given together, one of them, the others filtering what it reads).
schema.index({ programId: 1, createdAt: -1, _id: -1 });
schema.index({ programId: 1, endpointId: 1, createdAt: -1, _id: -1 });
schema.index({ programId: 1, eventId: 1, createdAt: -1, _id: -1 });
schema.index({ programId: 1, status: 1, createdAt: -1, _id: -1 });
schema.index({ programId: 1, eventType: 1, createdAt: -1, _id: -1 });
// An endpoint's failed deliveries of a window (recover).
schema.index({ endpointId: 1, status: 1, createdAt: 1 });

const webhookDeliveryModel = (connection: Connection): Model<WebhookDeliveryDocument> =>
  connection.model<WebhookDeliveryDocument>('WebhookDelivery', schema, 'webhook_deliveries');

export type ClaimedDelivery = WebhookDeliveryDocument & { lockToken: string };
/** A delivery that takes its place in its object's order on its endpoint. */
export type OrderedDelivery = { endpointId: string; objectKey: string; revision: number };
export type DeliveryFilter = { endpointId?: string; eventId?: string; status?: DeliveryStatus; eventType?: string; createdAt?: Period };

/** An attempt's outcome written while its sender holds the delivery. */
type HeldOutcome = { held: ClaimedDelivery; set: Partial<WebhookDeliveryDocument>; attempt: NewAttempt };

/**
 * Attempts recorded by one write at most, and writes at once per program: attempts that end while
 * one is being written share the next (no timer: a lone attempt is written on the next turn).
 */
const ATTEMPT_BATCHES = { maxBatch: 100, maxInFlight: 2 };

/**
 * The delivery log. Everything a sender does to one delivery is a point operation by _id (with the
 * program checked); only the log's lists and the endpoint-wide operations query it. Attempts are
 * appended in batches: many attempts' outcomes, one write.
 */
export class WebhookDeliveryRepository {
  private readonly model: Model<WebhookDeliveryDocument>;
  private readonly attempts: GroupCommit<HeldOutcome, boolean>;
  /** New deliveries, by program: the fan-outs running side by side share a write. */
  private readonly fannedOut: SharedInserts<WebhookDeliveryDocument>;

  constructor(context: { connection: Connection }) {
    this.model = webhookDeliveryModel(context.connection);
    this.attempts = new GroupCommit((programId, outcomes) => this.recordAttempts(programId, outcomes), ATTEMPT_BATCHES);
    this.fannedOut = new SharedInserts(this.model);
  }

  byId(programId: string, id: string): Promise<WebhookDeliveryDocument | null> {
    return byIdInProgram(this.model, programId, id);
  }

  /** Stores a new delivery; false when it exists already (a redelivered event). */
  insert(delivery: WebhookDeliveryDocument): Promise<boolean> {
    return insertOnce(this.model, delivery);
  }

  /**
   * Stores the new deliveries of one event in one write (a fan-out; shared with the other fan-outs
   * of the program running meanwhile): answers, in order, whether each was stored, false for one that
   * exists already (a redelivered event).
   */
  insertNew(programId: string, deliveries: WebhookDeliveryDocument[]): Promise<boolean[]> {
    return this.fannedOut.insertEach(
      programId,
      deliveries.map((delivery) => ({ ...delivery, programId })),
    );
  }

  list(programId: string, filter: DeliveryFilter, page: PageRequest) {
    const scope: FilterQuery<WebhookDeliveryDocument> = { programId };
    if (filter.endpointId !== undefined) scope.endpointId = filter.endpointId;
    if (filter.eventId !== undefined) scope.eventId = filter.eventId;
    if (filter.status !== undefined) scope.status = filter.status;
    if (filter.eventType !== undefined) scope.eventType = filter.eventType;
    if (filter.createdAt !== undefined) scope.createdAt = withinPeriod(filter.createdAt);
    return findPage<WebhookDeliveryDocument>(this.model, scope, page, { programId });
  }

  /** A pending delivery whose attempt is due and that nobody holds, leased to the caller. */
  leaseDue(programId: string, id: string, leaseMs: number): Promise<ClaimedDelivery | null> {
    const now = new Date();
    return this.lease({ _id: id, programId, status: 'pending', nextAttemptAt: { $lte: now }, lockedUntil: { $lte: now } }, now, leaseMs);
  }

  /** Any delivery nobody holds right now (a manual re-send), leased to the caller. */
  leaseAny(programId: string, id: string, leaseMs: number): Promise<ClaimedDelivery | null> {
    const now = new Date();
    return this.lease({ _id: id, programId, lockedUntil: { $lte: now } }, now, leaseMs);
  }

  /** A pending delivery that nobody holds becomes due now; false when it is held or no longer pending. */
  async dueNow(programId: string, id: string, now: Date): Promise<boolean> {
    const result = await this.model.updateOne(
      { _id: id, programId, status: 'pending', lockedUntil: { $lte: now } },
      { $set: { nextAttemptAt: now } },
    );
    return result.matchedCount === 1;
  }

  /**
   * Writes the outcome of an attempt, and gives the lease back, only while the caller still holds it.
   * An attempt joins the next batch of its program's attempts (one write for them all); it resolves
   * once that write is stored, so nothing is answered or acknowledged before, and a stop that waits
   * for its attempts waits for their records too.
   */
  async recordHeld(held: ClaimedDelivery, set: Partial<WebhookDeliveryDocument>, attempt?: NewAttempt): Promise<boolean> {
    if (attempt) return this.attempts.submit(held.programId, { held, set, attempt });
    const recorded = await this.model.collection.updateOne(
      { _id: held._id as never, programId: held.programId, lockToken: held.lockToken },
      { $set: set } as never,
    );
    return recorded.modifiedCount === 1;
  }

  /**
   * One write for a batch of attempts, each conditional on its lease. The server counts what matched,
   * not which: when every one matched (a lease lost is rare) that is the answer; otherwise each
   * delivery is read back, and an attempt was recorded when its id is in the delivery's log.
   */
  private async recordAttempts(programId: string, outcomes: HeldOutcome[]): Promise<boolean[]> {
    const writes = outcomes.map(({ held, set, attempt }) => ({
      updateOne: {
        filter: { _id: held._id as never, programId, lockToken: held.lockToken },
        update: { $set: set, $push: { attempts: { $each: [attempt], $slice: -KEPT_ATTEMPTS } } } as never,
      },
    }));
    const result = await this.model.collection.bulkWrite(writes, { ordered: false });
    if (result.modifiedCount === outcomes.length) return outcomes.map(() => true);
    const stored = (await this.model.collection
      .find({ _id: { $in: outcomes.map(({ held }) => held._id) } as never, programId })
      .project({ attempts: 1 })
      .toArray()) as unknown as Pick<WebhookDeliveryDocument, '_id' | 'attempts'>[];
    const logs = new Map(stored.map((delivery) => [delivery._id, delivery.attempts]));
    return outcomes.map(({ held, attempt }) => (logs.get(held._id) ?? []).some((kept) => kept.attemptId === attempt.attemptId));
  }

  /** Pending deliveries of an endpoint that nobody is sending fail: it receives nothing further. */
  async failPendingOf(programId: string, endpointId: string): Promise<void> {
    await this.model.updateMany(
      { programId, endpointId, status: 'pending', lockedUntil: { $lte: new Date() } },
      { $set: { status: 'failed', nextAttemptAt: null, updatedAt: new Date() } },
    );
  }

  /** The endpoint's failed deliveries created in [since, until] (a manual operation over history: it may scan). */
  async failedOf(
    programId: string,
    endpointId: string,
    since: Date,
    until: Date,
  ): Promise<{ _id: string; programId: string; endpointId: string }[]> {
    return this.model
      .find({ programId, endpointId, status: 'failed', createdAt: { $gte: since, $lte: until } })
      .select('_id programId endpointId')
      .lean();
  }

  /** Back to pending with a fresh retry schedule; false when it was not failed (any more). */
  async retryFailed(programId: string, id: string, dueAt: Date): Promise<boolean> {
    const result = await this.model.updateOne(
      { _id: id, programId, status: 'failed' },
      { $set: { status: 'pending', scheduledAttempts: 0, nextAttemptAt: dueAt, updatedAt: new Date() } },
    );
    return result.modifiedCount === 1;
  }

  /**
   * Back to pending with a fresh retry schedule if it ended in one of `statuses` and nobody is
   * sending it (a replay); false otherwise (pending already, or received and not asked again).
   */
  async requeueEnded(programId: string, id: string, statuses: readonly DeliveryStatus[], dueAt: Date): Promise<boolean> {
    const now = new Date();
    const result = await this.model.updateOne(
      { _id: id, programId, status: { $in: [...statuses] }, lockedUntil: { $lte: now } },
      { $set: { status: 'pending', scheduledAttempts: 0, nextAttemptAt: dueAt, updatedAt: now } },
    );
    return result.modifiedCount === 1;
  }

  /**
   * The lease is a conditional write of a fresh token; the claim is confirmed by reading the token
   * back by _id, never from a findOneAndUpdate result (DESIGN.md section 8).
   */
  private async lease(filter: FilterQuery<WebhookDeliveryDocument>, now: Date, leaseMs: number): Promise<ClaimedDelivery | null> {
    const lockToken = randomUUID();
    const taken = await this.model.collection.updateOne(filter as never, {
      $set: { lockedUntil: new Date(now.getTime() + leaseMs), lockToken },
    });
    if (taken.modifiedCount !== 1) return null;
    const claimed = (await this.model.collection.findOne({ _id: filter._id as never })) as WebhookDeliveryDocument | null;
    return claimed?.lockToken === lockToken ? (claimed as ClaimedDelivery) : null;
  }
}

/** A UUID (version 5 layout) from the event and endpoint ids: the same pair always gives the same id. */
export function deliveryIdOf(eventId: string, endpointId: string): string {
  return uuidFromDigest(createHash('sha256').update(`${eventId}:${endpointId}`).digest());
}

export function toDeliveryAttempt(attempt: StoredAttempt): DeliveryAttempt {
  return {
    at: attempt.at.toISOString(),
    statusCode: attempt.statusCode,
    latencyMs: attempt.latencyMs,
    responseExcerpt: attempt.responseExcerpt,
    responseBytes: attempt.responseBytes ?? null,
    error: attempt.error,
    traceId: attempt.traceId ?? null,
  };
}

export function toWebhookDelivery(delivery: WebhookDeliveryDocument): WebhookDelivery {
  return {
    id: delivery._id,
    endpointId: delivery.endpointId,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    status: delivery.status,
    attempts: delivery.attempts.map(toDeliveryAttempt),
    nextAttemptAt: delivery.nextAttemptAt?.toISOString() ?? null,
    createdAt: delivery.createdAt.toISOString(),
    updatedAt: delivery.updatedAt.toISOString(),
  };
}
