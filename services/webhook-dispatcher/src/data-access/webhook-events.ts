import type { WebhookPayload } from '@affiliate/contracts';
import { byIdInProgram, findPage, SharedInserts, type PageRequest } from '@affiliate/platform';
import { Schema, type Connection, type FilterQuery, type Model } from 'mongoose';

/**
 * One public event as its subscribers got it: `_id` is the event id (the webhook-id of every
 * delivery of it) and `body` the exact bytes delivered, so a list, a backfill, a replay and the
 * signature check all see what was sent.
 */
export type StoredEventDocument = {
  _id: string;
  programId: string;
  type: string;
  /** `data.id` of the event: the object it is about. */
  objectId: string | null;
  body: string;
  /** When the event occurred (the envelope's createdAt): the list's order and the retention's clock. */
  createdAt: Date;
  /** createdAt plus the retention: MongoDB's TTL monitor deletes the event then. */
  expiresAt: Date;
};

const schema = new Schema<StoredEventDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    type: { type: String, required: true },
    objectId: { type: String, default: null },
    body: { type: String, required: true },
    createdAt: { type: Date, required: true },
    expiresAt: { type: Date, required: true },
  },
  { versionKey: false },
);
// The list's three lookups: by time, by type, by object, each newest first within a program.
schema.index({ programId: 1, createdAt: -1, _id: -1 });
schema.index({ programId: 1, type: 1, createdAt: -1, _id: -1 });
schema.index({ programId: 1, objectId: 1, createdAt: -1, _id: -1 });
schema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });
// The sweep's other half: expiresAt was fixed when the event was written, so after EVENT_RETENTION_DAYS
// is lowered the events older than the new retention are found by their createdAt.
schema.index({ createdAt: 1 });

const storedEventModel = (connection: Connection): Model<StoredEventDocument> =>
  connection.model<StoredEventDocument>('StoredEvent', schema, 'webhook_events');

export type EventFilter = { type?: string; types?: readonly string[]; objectId?: string; since?: Date; before?: Date };

function scopeOf(programId: string, filter: EventFilter): FilterQuery<StoredEventDocument> {
  const scope: FilterQuery<StoredEventDocument> = { programId };
  if (filter.type !== undefined) scope.type = filter.type;
  else if (filter.types !== undefined) scope.type = { $in: [...filter.types] };
  if (filter.objectId !== undefined) scope.objectId = filter.objectId;
  const createdAt: { $gte?: Date; $lt?: Date } = {};
  if (filter.since !== undefined) createdAt.$gte = filter.since;
  if (filter.before !== undefined) createdAt.$lt = filter.before;
  if (Object.keys(createdAt).length > 0) scope.createdAt = createdAt;
  return scope;
}

/** Where a walk through a window of events stopped: the last event handed out, oldest first. */
export type EventCursor = { createdAt: Date; id: string };

/** The events of each program for GET /events, backfills, replays and the signature check. */
export class StoredEventRepository {
  private readonly model: Model<StoredEventDocument>;
  /** Events recorded by the fan-outs of a program running side by side share a write. */
  private readonly recorded: SharedInserts<StoredEventDocument>;

  constructor(context: { connection: Connection }) {
    this.model = storedEventModel(context.connection);
    this.recorded = new SharedInserts(this.model);
  }

  /** Stores the event once: a redelivered event (same id) leaves the first copy as it is. */
  async record(programId: string, payload: WebhookPayload, body: string, retentionMs: number): Promise<void> {
    const createdAt = new Date(payload.createdAt);
    const objectId = typeof payload.data.id === 'string' ? payload.data.id : null;
    await this.recorded.insertOnce(programId, {
      _id: payload.id,
      programId,
      type: payload.event,
      objectId,
      body,
      createdAt,
      expiresAt: new Date(createdAt.getTime() + retentionMs),
    });
  }

  byId(programId: string, id: string): Promise<StoredEventDocument | null> {
    return byIdInProgram(this.model, programId, id);
  }

  /** Newest first, paged by the last event's id. */
  list(programId: string, filter: EventFilter, page: PageRequest) {
    return findPage<StoredEventDocument>(this.model, scopeOf(programId, filter), page, { programId });
  }

  /** Up to `limit` events of the window after `cursor`, oldest first: a walk a backfill can resume. */
  oldestFirst(programId: string, filter: EventFilter, cursor: EventCursor | null, limit: number): Promise<StoredEventDocument[]> {
    const scope = scopeOf(programId, filter);
    const after = cursor
      ? { $or: [{ createdAt: { $gt: cursor.createdAt } }, { createdAt: cursor.createdAt, _id: { $gt: cursor.id } }] }
      : {};
    return this.model
      .find({ ...scope, ...after })
      .sort({ createdAt: 1, _id: 1 })
      .limit(limit)
      .lean();
  }

  /**
   * The retention sweep, across programs: the events past their expiresAt (the local server runs no
   * TTL monitor; MongoDB's usually has done it already), and those older than the retention in force,
   * which is shorter than the one they were written with when EVENT_RETENTION_DAYS was lowered since.
   */
  async deleteExpiredAcrossPrograms(retentionMs: number, now = new Date()): Promise<number> {
    const expired = { $or: [{ expiresAt: { $lte: now } }, { createdAt: { $lt: new Date(now.getTime() - retentionMs) } }] };
    return (await this.model.deleteMany(expired)).deletedCount;
  }
}
