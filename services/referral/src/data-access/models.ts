import type { Connection, Model } from 'mongoose';
import { referralModel, type ReferralDocument } from './referrals';

export type ReferralModels = { referrals: Model<ReferralDocument> };

export function createModels(connection: Connection): ReferralModels {
  return { referrals: referralModel(connection) };
}
