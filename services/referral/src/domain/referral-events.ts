import type { EventEnvelope } from '@affiliate/contracts';
import { createEvent } from '@affiliate/platform';
import { toReferral, type ReferralDocument } from '../data-access/referrals';

export const referralCreated = (referral: ReferralDocument): EventEnvelope =>
  createEvent('referral.created', referral.programId, toReferral(referral));

export const referralUpdated = (referral: ReferralDocument): EventEnvelope =>
  createEvent('referral.updated', referral.programId, toReferral(referral));

export const referralDeleted = (referral: ReferralDocument): EventEnvelope =>
  createEvent('referral.deleted', referral.programId, { id: referral._id });

export const DUPLICATE_EMAIL_MESSAGE = 'A referral with this email already exists';
