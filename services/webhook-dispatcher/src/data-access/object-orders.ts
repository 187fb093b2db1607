import { byIdInProgram } from '@affiliate/platform';
import { Schema, type Connection, type Model } from 'mongoose';
import type { OrderedDelivery } from './webhook-deliveries';

/**
 * The order of one object's deliveries to one PER_OBJECT endpoint: the revisions whose deliveries are
 * pending, and every revision that reached it. What ordered delivery asks before each attempt, read
 * by `_id`: the delivery log is never queried per attempt, since the local server answers no query
 * but by `_id` or a unique key without a scan (DESIGN.md section 8).
 */
export type ObjectOrderDocument = {
  /** `<endpointId> <objectKey>`. */
  _id: string;
  programId: string;
  pending: { revision: number; deliveryId: string }[];
  /**
   * The highest SEEN_KEPT revisions the endpoint got a delivery of, ascending: a revision is looked
   * for just below a new one, so older ones only matter to a delivery that many revisions late.
   */
  seen: number[];
  /**
   * The last arrival plus the event retention: a TTL index (and the dispatcher's sweep, where no TTL
   * monitor runs) then removes the order of an object that has not changed since. Every delivery of
   * it has ended long before (the retry schedule is days, the retention a month); its next revision,
   * if one ever comes, waits the gap's bounded wait for a predecessor the endpoint no longer knows of.
   * Absent on orders written before: removed with their endpoint, or never.
   */
  expiresAt?: Date;
};

/** Revisions kept in `seen`: some 13 KB at most per object and endpoint. */
export const SEEN_KEPT = 1000;

const schema = new Schema<ObjectOrderDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    pending: { type: [{ revision: Number, deliveryId: String, _id: false }], default: [] },
    seen: { type: [Number], default: [] },
    expiresAt: { type: Date, required: false },
  },
  { versionKey: false },
);
schema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });

const objectOrderModel = (connection: Connection): Model<ObjectOrderDocument> =>
  connection.model<ObjectOrderDocument>('WebhookObjectOrder', schema, 'webhook_object_orders');

const keyOf = (ordered: OrderedDelivery) => `${ordered.endpointId} ${ordered.objectKey}`;

export class ObjectOrderRepository {
  private readonly model: Model<ObjectOrderDocument>;

  constructor(context: { connection: Connection }) {
    this.model = objectOrderModel(context.connection);
  }

  of(programId: string, ordered: OrderedDelivery): Promise<ObjectOrderDocument | null> {
    return byIdInProgram(this.model, programId, keyOf(ordered));
  }

  /** A new delivery of the object to the endpoint: pending, its revision seen, and the order kept for `keepMs` more. */
  async arrived(programId: string, ordered: OrderedDelivery, deliveryId: string, keepMs: number): Promise<void> {
    await this.model.collection.updateOne(
      { _id: keyOf(ordered) as never, programId },
      {
        $setOnInsert: { programId },
        $set: { expiresAt: new Date(Date.now() + keepMs) },
        $addToSet: { pending: { revision: ordered.revision, deliveryId } },
        $push: { seen: { $each: [ordered.revision], $sort: 1, $slice: -SEEN_KEPT } },
      } as never,
      { upsert: true },
    );
  }

  /**
   * The delivery of this revision ended (delivered or failed for good): the order as it stands after,
   * or null when the revision was not pending in it (a recovered or replayed delivery, which takes no
   * place in the order, or an end recorded already).
   */
  async ended(programId: string, ordered: OrderedDelivery): Promise<ObjectOrderDocument | null> {
    const pulled = await this.model.collection.updateOne({ _id: keyOf(ordered) as never, programId }, {
      $pull: { pending: { revision: ordered.revision } },
    } as never);
    return pulled.modifiedCount === 1 ? this.of(programId, ordered) : null;
  }

  /** The orders of a deleted endpoint: `_id` begins with its id (an anchored prefix, which an index on `_id` serves). */
  async removeOfEndpoint(programId: string, endpointId: string): Promise<void> {
    await this.model.collection.deleteMany({ _id: { $regex: `^${endpointId} ` } as never, programId });
  }

  /** The sweep, across programs: the local server runs no TTL monitor (MongoDB's usually has done it already). */
  async deleteExpiredAcrossPrograms(now = new Date()): Promise<number> {
    return (await this.model.collection.deleteMany({ expiresAt: { $lte: now } })).deletedCount;
  }
}
