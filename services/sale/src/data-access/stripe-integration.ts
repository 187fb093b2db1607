import { byIdInProgram, insertOnce, isDuplicateKey, processedEvents, programKey, type ClaimOutcome, type ProcessedEvents } from '@affiliate/platform';
import { Schema, type Connection, type Model } from 'mongoose';

/**
 * What the Stripe integration keeps: each program's webhook signing secret, the Stripe objects it
 * has linked to our own (a customer to its referral, a charge or payment intent to its sale), and
 * the Stripe events already handled. Every lookup is a point lookup on `_id`.
 */
type StripeSettingsDocument = { _id: string; programId: string; webhookSecret: string; updatedAt: Date };

/**
 * `_id` is `<programId>:<Stripe object id>`: Stripe ids carry their type's prefix (cus_, ch_, pi_),
 * so one collection holds both kinds of link without two ids ever meeting.
 */
type StripeLinkDocument = {
  _id: string;
  programId: string;
  stripeId: string;
  referralId?: string;
  saleId?: string;
  /** The sale's amount when it was recorded, in minor units: refunds scale from it, not from an amount already reduced. */
  saleTotalMinor?: number;
  currency?: string;
  createdAt: Date;
};

const settingsSchema = new Schema<StripeSettingsDocument>(
  { _id: { type: String, required: true }, programId: { type: String, required: true }, webhookSecret: { type: String, required: true }, updatedAt: { type: Date, required: true } },
  { versionKey: false },
);
const linkSchema = new Schema<StripeLinkDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    stripeId: { type: String, required: true },
    referralId: { type: String },
    saleId: { type: String },
    saleTotalMinor: { type: Number },
    currency: { type: String },
    createdAt: { type: Date, required: true },
  },
  { versionKey: false },
);

const settingsModel = (connection: Connection): Model<StripeSettingsDocument> =>
  connection.model<StripeSettingsDocument>('StripeSettings', settingsSchema, 'stripe_settings');
const linkModel = (connection: Connection): Model<StripeLinkDocument> => connection.model<StripeLinkDocument>('StripeLink', linkSchema, 'stripe_links');

export class StripeSettingsRepository {
  private readonly model: Model<StripeSettingsDocument>;

  constructor(context: { connection: Connection }) {
    this.model = settingsModel(context.connection);
  }

  async webhookSecretOf(programId: string): Promise<string | null> {
    return (await byIdInProgram(this.model, programId, programId))?.webhookSecret ?? null;
  }

  /** One document per program, its id the program's: the last secret written is the one in force. */
  async saveWebhookSecret(programId: string, webhookSecret: string): Promise<void> {
    const write = () => this.model.collection.updateOne({ _id: programId as never }, { $set: { programId, webhookSecret, updatedAt: new Date() } }, { upsert: true });
    try {
      await write();
    } catch (error) {
      // Two first writes raced to create the document: it exists now, so this one is a plain update.
      if (!isDuplicateKey(error)) throw error;
      await write();
    }
  }
}

export type StripePaymentLink = { saleId: string; saleTotalMinor: number; currency: string };

export class StripeLinkRepository {
  private readonly model: Model<StripeLinkDocument>;

  constructor(context: { connection: Connection }) {
    this.model = linkModel(context.connection);
  }

  async referralOfCustomer(programId: string, customerId: string): Promise<string | null> {
    return (await byIdInProgram(this.model, programId, programKey(programId, customerId)))?.referralId ?? null;
  }

  /** The first link of a customer stays: a replayed or later checkout of the same customer changes nothing. */
  async linkCustomer(programId: string, customerId: string, referralId: string): Promise<void> {
    await insertOnce(this.model, { _id: programKey(programId, customerId), programId, stripeId: customerId, referralId, createdAt: new Date() });
  }

  async saleOfPayment(programId: string, paymentId: string): Promise<StripePaymentLink | null> {
    const link = await byIdInProgram(this.model, programId, programKey(programId, paymentId));
    if (link?.saleId === undefined || link.saleTotalMinor === undefined || link.currency === undefined) return null;
    return { saleId: link.saleId, saleTotalMinor: link.saleTotalMinor, currency: link.currency };
  }

  async linkPayment(programId: string, paymentId: string, sale: StripePaymentLink): Promise<void> {
    await insertOnce(this.model, { _id: programKey(programId, paymentId), programId, stripeId: paymentId, ...sale, createdAt: new Date() });
  }
}

/**
 * Stripe events handled, once per program and event id: the platform's claim of consumed events
 * (a unique insert, taken over after a lease when its holder died), keyed `stripe:<program>:<event>`.
 */
export class StripeEventClaims {
  private readonly claims: ProcessedEvents;

  constructor(context: { connection: Connection }) {
    this.claims = processedEvents(context.connection, 'stripe');
  }

  claim(programId: string, eventId: string): Promise<ClaimOutcome> {
    return this.claims.claim(programKey(programId, eventId));
  }

  complete(programId: string, eventId: string): Promise<void> {
    return this.claims.complete(programKey(programId, eventId));
  }

  release(programId: string, eventId: string): Promise<void> {
    return this.claims.release(programKey(programId, eventId));
  }
}
