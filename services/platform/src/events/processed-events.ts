import { Schema, type Connection, type Model } from 'mongoose';
import { GroupCommit } from '../group-commit';
import { SharedInserts } from '../store/aggregate-store';

type ProcessedEventDocument = { _id: string; state: 'processing' | 'done'; startedAt: Date };

/** `new`: handle it; `done`: handled before, ack; `busy`: a copy is being handled right now, try later. */
export type ClaimOutcome = 'new' | 'done' | 'busy';

export type ProcessedEvents = {
  claim(eventId: string): Promise<ClaimOutcome>;
  complete(eventId: string): Promise<void>;
  release(eventId: string): Promise<void>;
};

const schema = new Schema<ProcessedEventDocument>(
  { _id: { type: String, required: true }, state: { type: String, required: true }, startedAt: { type: Date, required: true } },
  { versionKey: false },
);

/** Claims (and completions) written by one command at most, and such commands at once per consumer. */
const CLAIM_BATCHES = { maxBatch: 200, maxInFlight: 2 };

/**
 * Event ids a consumer has handled, so that a redelivered or duplicated message is processed once,
 * even when two copies arrive at the same moment: the claim is a unique insert. A claim whose
 * consumer died is taken over after the lease, so a crash never strands an event.
 */
export function processedEvents(connection: Connection, consumer: string, leaseMs = 60_000): ProcessedEvents {
  const model: Model<ProcessedEventDocument> =
    (connection.models.ProcessedEvent as Model<ProcessedEventDocument> | undefined) ??
    connection.model<ProcessedEventDocument>('ProcessedEvent', schema, 'processed_events');
  const key = (eventId: string) => `${consumer}:${eventId}`;
  // Every event passes here twice (claim, complete): plain driver writes by _id, without mongoose's
  // document building and casting, which the profile showed as a large part of a consumer's CPU. The
  // claims and completions of the events handled side by side share their writes (group commit).
  const collection = model.collection;
  const claims = new SharedInserts(model, CLAIM_BATCHES);
  const completions = new GroupCommit<string, void>(async (_consumer, ids) => {
    await collection.updateMany({ _id: { $in: ids } as never }, { $set: { state: 'done' } });
    return ids.map(() => undefined);
  }, CLAIM_BATCHES);
  return {
    async claim(eventId) {
      if (await claims.insertOnce(consumer, { _id: key(eventId), state: 'processing', startedAt: new Date() })) return 'new';
      const existing = await model.findById(key(eventId)).lean();
      if (!existing) return this.claim(eventId);
      if (existing.state === 'done') return 'done';
      if (Date.now() - existing.startedAt.getTime() < leaseMs) return 'busy';
      const takeover = await model.updateOne(
        { _id: key(eventId), state: 'processing', startedAt: existing.startedAt },
        { $set: { startedAt: new Date() } },
      );
      return takeover.modifiedCount === 1 ? 'new' : 'busy';
    },
    complete(eventId) {
      return completions.submit(consumer, key(eventId));
    },
    async release(eventId) {
      await model.deleteOne({ _id: key(eventId), state: 'processing' });
    },
  };
}
