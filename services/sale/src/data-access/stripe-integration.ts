import type { ExplainedAttribution } from '@affiliate/contracts';
import {
  byIdInProgram,
  insertOnce,
  processedEvents,
  programKey,
  unlessKeyTaken,
  UniqueKeyConflict,
  type ClaimOutcome,
  type ProcessedEvents,
} from '@affiliate/platform';
import { Schema, type Connection, type Model } from 'mongoose';

/**
 * What the Stripe integration keeps: each program's webhook signing secret, the Stripe objects it
 * has linked to our own (a customer to its referral, a charge or payment intent to its sale), and
 * the Stripe events already handled. Every lookup is a point lookup on `_id`.
 */
type StripeSettingsDocument = { _id: string; programId: string; webhookSecret: string; updatedAt: Date };

/**
 * `_id` is `<programId>:<Stripe object id>`: Stripe ids carry their type's prefix (cus_, cs_, ch_,
 * pi_), so one collection holds every kind of link without two ids ever meeting. What is kept about
 * an object beside its link is keyed `<programId>:<what>:<Stripe object id>`, a point lookup too.
 */
type StripeLinkDocument = {
  _id: string;
  programId: string;
  stripeId: string;
  /** A customer's (or a guest checkout's) referral, and how the checkout found it (REFERRAL when absent: links made before). */
  referralId?: string;
  foundBy?: 'REFERRAL' | 'EMAIL';
  /** A customer whose email already belonged to another affiliate's referral, credited through the click its checkout named. */
  visit?: ExplainedAttribution;
  saleId?: string;
  /** The sale's amount when it was recorded, in minor units: refunds scale from it, not from an amount already reduced. */
  saleTotalMinor?: number;
  currency?: string;
  /** A customer's or subscription's Stripe promotion code, from its checkout: its invoices name the discount by a bare id only. */
  promotionCodeId?: string;
  /** An invoice's charges and payment intents, from invoice_payment.paid, whichever of it and invoice.paid comes first. */
  paymentIds?: string[];
  /** A customer's paid invoices that nothing attributed yet, settled when a checkout links the customer. */
  invoices?: UnattributedInvoice[];
  /** The most a charge has been refunded, by any event handled so far. */
  refundedMinor?: number;
  createdAt: Date;
};

/** A paid invoice as the sale needs it, kept until its customer is attributed. */
export type UnattributedInvoice = {
  invoiceId: string;
  customerId: string | null;
  email: string | null;
  currency: string;
  amountPaid: number;
  billingReason: string | null;
  paidAtSeconds: number;
  subscriptionId: string | null;
  promotionCodeIds: string[];
  paymentIds: string[];
};

/** How a Stripe customer (or a checkout without one) is credited: its referral, or the click its checkout named. */
export type StripeCustomerCredit = { referralId: string; method: 'REFERRAL' | 'EMAIL' } | { visit: ExplainedAttribution };

/** A customer pays many invoices over the years; those kept unattributed are its latest few. */
const UNATTRIBUTED_INVOICES_KEPT = 20;

const settingsSchema = new Schema<StripeSettingsDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    webhookSecret: { type: String, required: true },
    updatedAt: { type: Date, required: true },
  },
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
    foundBy: { type: String },
    visit: { type: Object },
    promotionCodeId: { type: String },
    paymentIds: { type: [String], default: undefined },
    invoices: { type: [Object], default: undefined },
    refundedMinor: { type: Number },
    createdAt: { type: Date, required: true },
  },
  { versionKey: false },
);

const settingsModel = (connection: Connection): Model<StripeSettingsDocument> =>
  connection.model<StripeSettingsDocument>('StripeSettings', settingsSchema, 'stripe_settings');
const linkModel = (connection: Connection): Model<StripeLinkDocument> =>
  connection.model<StripeLinkDocument>('StripeLink', linkSchema, 'stripe_links');

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
    const write = () =>
      this.model.collection.updateOne(
        { _id: programId as never },
        { $set: { programId, webhookSecret, updatedAt: new Date() } },
        { upsert: true },
      );
    // Two first writes raced to create the document: it exists now, so this one is a plain update.
    if ((await unlessKeyTaken(write)) instanceof UniqueKeyConflict) await write();
  }
}

export type StripePaymentLink = { saleId: string; saleTotalMinor: number; currency: string };

export class StripeLinkRepository {
  private readonly model: Model<StripeLinkDocument>;

  constructor(context: { connection: Connection }) {
    this.model = linkModel(context.connection);
  }

  /** `customerId` is a Stripe customer, or the checkout session of a guest payment. */
  async creditOfCustomer(programId: string, customerId: string): Promise<StripeCustomerCredit | null> {
    const link = await byIdInProgram(this.model, programId, programKey(programId, customerId));
    if (link?.visit) return { visit: link.visit };
    return link?.referralId ? { referralId: link.referralId, method: link.foundBy ?? 'REFERRAL' } : null;
  }

  /** The first link of a customer stays: a replayed or later checkout of the same customer changes nothing. */
  async linkCustomer(programId: string, customerId: string, credit: StripeCustomerCredit): Promise<void> {
    const how = 'visit' in credit ? { visit: credit.visit } : { referralId: credit.referralId, foundBy: credit.method };
    await insertOnce(this.model, {
      _id: programKey(programId, customerId),
      programId,
      stripeId: customerId,
      ...how,
      createdAt: new Date(),
    });
  }

  /** The first promotion code of a customer or subscription stays, as its first checkout named it. */
  async rememberPromotionCode(programId: string, ownerId: string, promotionCodeId: string): Promise<void> {
    await insertOnce(this.model, {
      _id: programKey(programId, `promotion_code:${ownerId}`),
      programId,
      stripeId: ownerId,
      promotionCodeId,
      createdAt: new Date(),
    });
  }

  async promotionCodeOf(programId: string, ownerId: string): Promise<string | null> {
    return (await byIdInProgram(this.model, programId, programKey(programId, `promotion_code:${ownerId}`)))?.promotionCodeId ?? null;
  }

  async addInvoicePayments(programId: string, invoiceId: string, paymentIds: string[]): Promise<void> {
    await this.upsert(programId, `payments:${invoiceId}`, invoiceId, { $addToSet: { paymentIds: { $each: paymentIds } } });
  }

  async invoicePayments(programId: string, invoiceId: string): Promise<string[]> {
    return (await byIdInProgram(this.model, programId, programKey(programId, `payments:${invoiceId}`)))?.paymentIds ?? [];
  }

  /** `holderId` is the invoice's customer, or the invoice itself when it has none. */
  async keepUnattributedInvoice(programId: string, holderId: string, invoice: UnattributedInvoice): Promise<void> {
    await this.upsert(programId, `unattributed:${holderId}`, holderId, {
      $push: { invoices: { $each: [invoice], $slice: -UNATTRIBUTED_INVOICES_KEPT } },
    });
  }

  /** Each invoice once, though Stripe's retries of invoice.paid may have kept it more than once. */
  async unattributedInvoices(programId: string, holderId: string): Promise<UnattributedInvoice[]> {
    const kept = (await byIdInProgram(this.model, programId, programKey(programId, `unattributed:${holderId}`)))?.invoices ?? [];
    return [...new Map(kept.map((invoice) => [invoice.invoiceId, invoice])).values()];
  }

  /** An invoice settled by a checkout is no longer kept: a later checkout of the customer does not go through it again. */
  async forgetUnattributedInvoice(programId: string, holderId: string, invoiceId: string): Promise<void> {
    await this.model.collection.updateOne(
      { _id: programKey(programId, `unattributed:${holderId}`) as never },
      { $pull: { invoices: { invoiceId } } as never },
    );
  }

  /**
   * Raises the charge's refunded amount to `refundedMinor` unless an event handled before raised it
   * further ($max, one atomic write), and answers the highest amount now recorded.
   */
  async raiseRefunded(programId: string, chargeId: string, refundedMinor: number): Promise<number> {
    await this.upsert(programId, `refunded:${chargeId}`, chargeId, { $max: { refundedMinor } });
    return this.refundedOf(programId, chargeId);
  }

  async refundedOf(programId: string, chargeId: string): Promise<number> {
    return (await byIdInProgram(this.model, programId, programKey(programId, `refunded:${chargeId}`)))?.refundedMinor ?? 0;
  }

  /** An update by `_id` that creates its document; two first writes racing to create it end as one insert and one update. */
  private async upsert(programId: string, key: string, stripeId: string, update: Record<string, unknown>): Promise<void> {
    const write = () =>
      this.model.collection.updateOne(
        { _id: programKey(programId, key) as never },
        { ...update, $setOnInsert: { programId, stripeId, createdAt: new Date() } },
        { upsert: true },
      );
    if ((await unlessKeyTaken(write)) instanceof UniqueKeyConflict) await write();
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
