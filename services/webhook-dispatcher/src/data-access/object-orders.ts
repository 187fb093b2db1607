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
  /** One number per revision the endpoint got a delivery of: a few kilobytes for thousands of changes. */
  seen: number[];
};

const schema = new Schema<ObjectOrderDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    pending: { type: [{ revision: Number, deliveryId: String, _id: false }], default: [] },
    seen: { type: [Number], default: [] },
  },
  { versionKey: false },
);

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

  /** A new delivery of the object to the endpoint: pending, and its revision seen. */
  async arrived(programId: string, ordered: OrderedDelivery, deliveryId: string): Promise<void> {
    await this.model.collection.updateOne(
      { _id: keyOf(ordered) as never, programId },
      { $setOnInsert: { programId }, $addToSet: { pending: { revision: ordered.revision, deliveryId }, seen: ordered.revision } } as never,
      { upsert: true },
    );
  }

  /** The delivery of this revision ended (delivered or failed for good): the order as it stands after. */
  async ended(programId: string, ordered: OrderedDelivery): Promise<ObjectOrderDocument | null> {
    await this.model.collection.updateOne({ _id: keyOf(ordered) as never, programId }, { $pull: { pending: { revision: ordered.revision } } } as never);
    return this.of(programId, ordered);
  }
}
