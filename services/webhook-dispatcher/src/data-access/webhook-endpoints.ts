import type { WebhookEndpoint } from '@affiliate/contracts';
import { Schema, type Connection, type Model } from 'mongoose';

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
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false },
);
schema.index({ programId: 1, active: 1, eventTypes: 1 });
schema.index({ programId: 1, createdAt: -1, _id: -1 });

export function webhookEndpointModel(connection: Connection): Model<WebhookEndpointDocument> {
  return connection.model<WebhookEndpointDocument>('WebhookEndpoint', schema, 'webhook_endpoints');
}

/** The secret is shown only when it was just made (create, rotation); reads never show it. */
export function toWebhookEndpoint(endpoint: WebhookEndpointDocument, options: { withSecret?: boolean } = {}): WebhookEndpoint {
  return {
    id: endpoint._id,
    url: endpoint.url,
    eventTypes: endpoint.eventTypes,
    description: endpoint.description,
    active: endpoint.active,
    disabledReason: endpoint.disabledReason,
    ...(options.withSecret ? { secret: endpoint.secret } : {}),
    createdAt: endpoint.createdAt.toISOString(),
    updatedAt: endpoint.updatedAt.toISOString(),
  };
}
