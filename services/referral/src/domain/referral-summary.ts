import type { ReferralsSummary } from '@affiliate/contracts';
import { createdPerDay, utcDaysOf } from '@affiliate/platform';
import type { ReferralRepositories } from '../data-access/repositories';

/**
 * The referrals' part of the program's summary (GET /api/v1/reports/summary, which the sale service
 * answers): every referral, and those created in [from, to) per UTC day, counted by the database.
 */
export async function referralSummary(
  repositories: ReferralRepositories,
  programId: string,
  from: Date,
  to: Date,
): Promise<ReferralsSummary> {
  const perDay = new Map<string, number>();
  let total = 0;
  for (const { _id, count } of await repositories.referrals.countsPerDay(programId, { from, to })) {
    total += count;
    if (_id.day !== null) perDay.set(_id.day, (perDay.get(_id.day) ?? 0) + count);
  }
  return {
    total,
    created: [...perDay.values()].reduce((sum, count) => sum + count, 0),
    daily: createdPerDay(utcDaysOf(from, to), perDay),
  };
}
