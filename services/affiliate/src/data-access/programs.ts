import { Schema, type Connection, type Model } from 'mongoose';

/** The program settings this service needs, projected from the gateway's program.* events. */
export type ProgramSettings = {
  urlModifier: string;
  destinationUrls: { url: string; params: Record<string, string> }[];
  requireApproval: boolean;
  defaultCommissionRate: number;
};

export type ProgramDocument = ProgramSettings & {
  _id: string;
  /** updatedAt of the program as last applied: an older event arriving late is ignored. */
  sourceUpdatedAt: Date;
  deleted: boolean;
};

export const DEFAULT_PROGRAM_SETTINGS: ProgramSettings = {
  urlModifier: 'ref',
  destinationUrls: [],
  requireApproval: false,
  defaultCommissionRate: 20,
};

const schema = new Schema<ProgramDocument>(
  {
    _id: { type: String, required: true },
    urlModifier: { type: String, required: true },
    destinationUrls: { type: Schema.Types.Mixed, default: [] },
    requireApproval: { type: Boolean, required: true },
    defaultCommissionRate: { type: Number, required: true },
    sourceUpdatedAt: { type: Date, required: true },
    deleted: { type: Boolean, default: false },
  },
  { versionKey: false },
);

export function programModel(connection: Connection): Model<ProgramDocument> {
  return connection.model<ProgramDocument>('Program', schema, 'programs');
}
