import { byIdInProgram, insertOnce } from '@affiliate/platform';
import { Schema, type Connection, type Model } from 'mongoose';

/**
 * The first commissioned payment of each customer of an affiliate: the date recurring rules count
 * from (LIMITED: within recurringMonths of it) and the mark that the next payment is not a first one.
 * Keyed by `<program>:<affiliate>:<customer>`, so every lookup is a point lookup.
 */
type CustomerPaymentDocument = { _id: string; programId: string; firstPaymentAt: Date; saleId: string };

const schema = new Schema<CustomerPaymentDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    firstPaymentAt: { type: Date, required: true },
    saleId: { type: String, required: true },
  },
  { versionKey: false },
);

const customerPaymentModel = (connection: Connection): Model<CustomerPaymentDocument> =>
  connection.model<CustomerPaymentDocument>('CustomerPayment', schema, 'customer_payments');

const keyOf = (programId: string, affiliateId: string, customer: string) => `${programId}:${affiliateId}:${customer}`;

export class CustomerPaymentRepository {
  private readonly model: Model<CustomerPaymentDocument>;

  constructor(context: { connection: Connection }) {
    this.model = customerPaymentModel(context.connection);
  }

  async firstPaymentAt(programId: string, affiliateId: string, customer: string): Promise<Date | null> {
    return (await byIdInProgram(this.model, programId, keyOf(programId, affiliateId, customer)))?.firstPaymentAt ?? null;
  }

  /** The first one recorded stays: a later or concurrent "first" payment changes nothing. */
  async recordFirst(programId: string, affiliateId: string, customer: string, sale: { id: string; at: Date }): Promise<void> {
    await insertOnce(this.model, { _id: keyOf(programId, affiliateId, customer), programId, firstPaymentAt: sale.at, saleId: sale.id });
  }
}
