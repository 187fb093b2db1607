import { AffiliateStatus, type AffiliatesSummary } from '@affiliate/contracts';
import { createdPerDay, utcDaysOf } from '@affiliate/platform';
import type { Repositories } from '../data-access/repositories';
import { programSettingsOf } from './program-settings';

/**
 * The affiliates' part of the program's summary (GET /api/v1/reports/summary, which the sale
 * service answers): every affiliate and those created in [from, to), per status and per UTC day,
 * counted by the database, and the program's reporting currency, which the summary lists first.
 */
export async function affiliateSummary(repositories: Repositories, programId: string, from: Date, to: Date): Promise<AffiliatesSummary> {
  const [rows, settings] = await Promise.all([
    repositories.affiliates.countsByStatusAndDay(programId, { from, to }),
    programSettingsOf(repositories, programId),
  ]);
  const byStatus = new Map(AffiliateStatus.options.map((status) => [status, { status, total: 0, created: 0 }]));
  const perDay = new Map<string, number>();
  for (const { _id, count } of rows) {
    const tally = _id.key === null ? undefined : byStatus.get(_id.key);
    if (tally) {
      tally.total += count;
      if (_id.day !== null) tally.created += count;
    }
    if (_id.day !== null) perDay.set(_id.day, (perDay.get(_id.day) ?? 0) + count);
  }
  const statuses = [...byStatus.values()];
  return {
    total: statuses.reduce((sum, each) => sum + each.total, 0),
    created: statuses.reduce((sum, each) => sum + each.created, 0),
    byStatus: statuses,
    daily: createdPerDay(utcDaysOf(from, to), perDay),
    reportingCurrency: settings.reportingCurrency,
  };
}
