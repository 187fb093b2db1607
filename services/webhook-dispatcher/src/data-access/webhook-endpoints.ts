import type { WebhookEndpoint, WebhookOrdering } from '@affiliate/contracts';
import { byIdInProgram, findPage, GroupCommit, unlessKeyTaken, type PageRequest } from '@affiliate/platform';
import { Schema, type Connection, type Model } from 'mongoose';
import { SecretBox } from './secret-box';

export type WebhookEndpointDocument = {
  _id: string;
  programId: string;
  url: string;
  /** Public types and wildcards (`sale.*`, `*`), as subscribed. */
  eventTypes: string[];
  description: string | null;
  active: boolean;
  disabledReason: string | null;
  secret: string;
  /** The secret before the last rotation: it keeps signing next to the new one until it expires. */
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
  /** Start of the current run of failures without a success; null while the endpoint is healthy. */
  failingSince: Date | null;
  /** PER_OBJECT: each object's deliveries go out in revision order. Absent on endpoints made before it: NONE. */
  ordering?: WebhookOrdering;
  createdAt: Date;
  updatedAt: Date;
};

const schema = new Schema<WebhookEndpointDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    url: { type: String, required: true },
    eventTypes: { type: [String], required: true },
    description: { type: String, default: null },
    active: { type: Boolean, required: true },
    disabledReason: { type: String, default: null },
    secret: { type: String, required: true },
    previousSecret: { type: String, default: null },
    previousSecretExpiresAt: { type: Date, default: null },
    failingSince: { type: Date, default: null },
    ordering: { type: String, required: false },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false },
);
schema.index({ programId: 1, active: 1, eventTypes: 1 });
schema.index({ programId: 1, createdAt: -1, _id: -1 });

const webhookEndpointModel = (connection: Connection): Model<WebhookEndpointDocument> =>
  connection.model<WebhookEndpointDocument>('WebhookEndpoint', schema, 'webhook_endpoints');

/** How many endpoints each program has, by program id: the cap is checked and counted in one point write. */
type EndpointCountDocument = { _id: string; count: number };
const endpointCountModel = (connection: Connection): Model<EndpointCountDocument> =>
  connection.model<EndpointCountDocument>(
    'WebhookEndpointCount',
    new Schema<EndpointCountDocument>(
      { _id: { type: String, required: true }, count: { type: Number, required: true } },
      { versionKey: false },
    ),
    'webhook_endpoint_counts',
  );

/** An endpoint an event goes to, and how it orders its deliveries. */
type Subscriber = { _id: string; ordering: WebhookOrdering };

/** The subscriptions that take an event type: the type itself, its family's wildcard, and `*`. */
function subscriptionsMatching(eventType: string): string[] {
  return [eventType, `${eventType.split('.')[0]}.*`, '*'];
}

/**
 * Each program's webhook endpoints. A read by id is a point lookup; the program is checked on the
 * document. Signing secrets are sealed on every write and opened on every read, here only: the
 * use cases see plain secrets, the database never does.
 */
export class WebhookEndpointRepository {
  private readonly model: Model<WebhookEndpointDocument>;
  private readonly counts: Model<EndpointCountDocument>;
  private readonly box: SecretBox;
  /** The endpoints of the attempts starting together, by program: one read for them all. */
  private readonly forAttempts: GroupCommit<string, WebhookEndpointDocument | null>;
  /** The subscribers the fan-outs running together ask for, by program: one read for them all. */
  private readonly subscriptions: GroupCommit<{ eventType: string; max: number }, Subscriber[]>;

  constructor(context: { connection: Connection }, encryptionKey: Buffer) {
    this.model = webhookEndpointModel(context.connection);
    this.counts = endpointCountModel(context.connection);
    this.box = new SecretBox(encryptionKey);
    this.forAttempts = new GroupCommit((programId, ids) => this.byIds(programId, ids), { maxBatch: 200, maxInFlight: 2 });
    this.subscriptions = new GroupCommit((programId, asks) => this.subscribedToEach(programId, asks), { maxBatch: 200, maxInFlight: 2 });
  }

  async byId(programId: string, id: string): Promise<WebhookEndpointDocument | null> {
    const stored = await byIdInProgram(this.model, programId, id);
    return stored && this.opened(stored);
  }

  /**
   * `byId` for an attempt about to be sent, read as it starts: the attempts starting at the same time
   * (a fan-out's, most often to a few endpoints) share one read, each endpoint opened once.
   */
  forAttempt(programId: string, id: string): Promise<WebhookEndpointDocument | null> {
    return this.forAttempts.submit(programId, id);
  }

  private async byIds(programId: string, ids: string[]): Promise<(WebhookEndpointDocument | null)[]> {
    const stored = (await this.model.collection
      .find({ _id: { $in: [...new Set(ids)] } as never, programId })
      .toArray()) as unknown as WebhookEndpointDocument[];
    const found = new Map(stored.map((endpoint) => [endpoint._id, this.opened(endpoint)]));
    return ids.map((id) => found.get(id) ?? null);
  }

  /**
   * Counts one more endpoint for the program unless it has `max` already: false then. The first time
   * a program is seen its endpoints are counted once (those made before the cap existed).
   */
  async reserveSlot(programId: string, max: number): Promise<boolean> {
    if (!(await this.counts.exists({ _id: programId }))) {
      const count = await this.model.countDocuments({ programId });
      // Another first endpoint counted them already: either count is right.
      await unlessKeyTaken(() => this.counts.create({ _id: programId, count }));
    }
    const counted = await this.counts.updateOne({ _id: programId, count: { $lt: max } }, { $inc: { count: 1 } });
    return counted.matchedCount === 1;
  }

  async releaseSlot(programId: string): Promise<void> {
    await this.counts.updateOne({ _id: programId, count: { $gt: 0 } }, { $inc: { count: -1 } });
  }

  /** Seals every secret stored before encryption existed; run once at start (a scan, never per request). */
  async sealPlaintextSecretsAcrossPrograms(): Promise<number> {
    const plain = await this.model.find({ secret: /^whsec_/ }).lean<WebhookEndpointDocument[]>();
    let sealed = 0;
    for (const stored of plain) {
      const changed = await this.model.updateOne(
        { _id: stored._id, secret: stored.secret },
        { $set: this.sealed(this.opened(stored), ['secret', 'previousSecret']) },
      );
      sealed += changed.modifiedCount;
    }
    return sealed;
  }

  /**
   * The ids of the program's active endpoints subscribed to this event type (directly or by
   * wildcard), the oldest `max` of them: subscriptions are checked against the cap when made, and
   * this holds it even if two changes at once passed that check together. The fan-outs of a program
   * running together share one read, begun after each asked (as fresh as a read of its own).
   */
  subscribedTo(programId: string, eventType: string, max: number): Promise<Subscriber[]> {
    return this.subscriptions.submit(programId, { eventType, max });
  }

  /** One read for the asks of a program: its active endpoints subscribed to any of their types (bounded by the endpoint cap), oldest first. */
  private async subscribedToEach(programId: string, asks: { eventType: string; max: number }[]): Promise<Subscriber[][]> {
    const types = [...new Set(asks.flatMap((ask) => subscriptionsMatching(ask.eventType)))];
    const found = await this.model
      .find({ programId, active: true, eventTypes: { $in: types } })
      .sort({ createdAt: 1, _id: 1 })
      .select('_id ordering eventTypes')
      .lean();
    return asks.map(({ eventType, max }) => {
      const matching = new Set(subscriptionsMatching(eventType));
      return found
        .filter((endpoint) => endpoint.eventTypes.some((type) => matching.has(type)))
        .slice(0, max)
        .map((endpoint) => ({ _id: endpoint._id, ordering: orderingOf(endpoint) }));
    });
  }

  /** The subscriptions of the program's active endpoints, but for `exceptId` (bounded by the endpoint cap). */
  async activeSubscriptions(programId: string, exceptId: string | null): Promise<string[][]> {
    const found = await this.model
      .find({ programId, active: true, ...(exceptId ? { _id: { $ne: exceptId } } : {}) })
      .select('eventTypes')
      .lean();
    return found.map((endpoint) => endpoint.eventTypes);
  }

  list(programId: string, page: PageRequest) {
    return findPage(this.model, { programId }, page);
  }

  async insert(endpoint: WebhookEndpointDocument): Promise<void> {
    await this.model.create({ ...endpoint, ...this.sealed(endpoint, ['secret', 'previousSecret']) });
  }

  /**
   * Applies the change only while the secret is still the one read: two rotations at once must not
   * both believe they made the current one. Each sealing has its own nonce, so "the one read" is the
   * stored form, read again here. A secret still stored in plain text is sealed by this write. Then
   * reads it back by _id rather than trusting a findOneAndUpdate result (DESIGN.md section 8). Null
   * when another change came first.
   */
  async changeIfSecretIs(
    programId: string,
    id: string,
    secret: string,
    set: Partial<WebhookEndpointDocument>,
  ): Promise<WebhookEndpointDocument | null> {
    const stored = await byIdInProgram(this.model, programId, id);
    if (!stored || this.opened(stored).secret !== secret) return null;
    const resealed = { ...this.opened(stored), ...set };
    const fields = ['secret', 'previousSecret'] as const;
    const sealing = fields.filter((field) => field in set || (stored[field] && !SecretBox.isSealed(stored[field])));
    const changed = await this.model.updateOne(
      { _id: id, programId, secret: stored.secret },
      { $set: { ...set, ...this.sealed(resealed, sealing) } },
    );
    return changed.matchedCount === 1 ? this.byId(programId, id) : null;
  }

  async remove(programId: string, id: string): Promise<boolean> {
    const removed = (await this.model.deleteOne({ _id: id, programId })).deletedCount === 1;
    if (removed) await this.releaseSlot(programId);
    return removed;
  }

  private opened(stored: WebhookEndpointDocument): WebhookEndpointDocument {
    return {
      ...stored,
      secret: this.box.open(stored.secret, stored._id),
      previousSecret: stored.previousSecret ? this.box.open(stored.previousSecret, stored._id) : null,
    };
  }

  private sealed(
    endpoint: WebhookEndpointDocument,
    fields: readonly ('secret' | 'previousSecret')[],
  ): Partial<Pick<WebhookEndpointDocument, 'secret' | 'previousSecret'>> {
    const seal = (value: string | null) => (value ? this.box.seal(value, endpoint._id) : null);
    return {
      ...(fields.includes('secret') ? { secret: this.box.seal(endpoint.secret, endpoint._id) } : {}),
      ...(fields.includes('previousSecret') ? { previousSecret: seal(endpoint.previousSecret) } : {}),
    };
  }

  /** Disables an active endpoint; false when it was disabled already. */
  async disable(programId: string, id: string, reason: string): Promise<boolean> {
    const changed = await this.model.updateOne(
      { _id: id, programId, active: true },
      { $set: { active: false, disabledReason: reason, updatedAt: new Date() } },
    );
    return changed.modifiedCount === 1;
  }

  async markHealthy(programId: string, id: string): Promise<void> {
    await this.model.updateOne({ _id: id, programId, failingSince: { $ne: null } }, { $set: { failingSince: null } });
  }

  /** Starts the run of failures at `at` unless one is running; returns the endpoint as it stands. */
  async markFailing(programId: string, id: string, at: Date): Promise<WebhookEndpointDocument | null> {
    await this.model.updateOne({ _id: id, programId, failingSince: null }, { $set: { failingSince: at } });
    return this.byId(programId, id);
  }
}

/** How the endpoint orders its deliveries: NONE unless it asked for PER_OBJECT. */
export const orderingOf = (endpoint: Pick<WebhookEndpointDocument, 'ordering'>): WebhookOrdering => endpoint.ordering ?? 'NONE';

/** The end of a rotation's overlap while it lasts, else null. */
export function overlapEndOf(endpoint: WebhookEndpointDocument, now = new Date()): string | null {
  return endpoint.previousSecret && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > now
    ? endpoint.previousSecretExpiresAt.toISOString()
    : null;
}

/** The secret is shown when it was just made (create, rotation) and when asked for (GET /webhook-endpoints/secret); lists never show it. */
export function toWebhookEndpoint(endpoint: WebhookEndpointDocument, options: { withSecret?: boolean } = {}): WebhookEndpoint {
  return {
    id: endpoint._id,
    url: endpoint.url,
    eventTypes: endpoint.eventTypes,
    description: endpoint.description,
    active: endpoint.active,
    disabledReason: endpoint.disabledReason,
    ordering: orderingOf(endpoint),
    ...(options.withSecret ? { secret: endpoint.secret } : {}),
    previousSecretExpiresAt: overlapEndOf(endpoint),
    createdAt: endpoint.createdAt.toISOString(),
    updatedAt: endpoint.updatedAt.toISOString(),
  };
}
