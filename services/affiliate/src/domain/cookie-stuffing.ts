import type { VisitorClick } from '../data-access/visitors';

const HOUR_MS = 3_600_000;

/**
 * The most affiliates whose links one visitor clicked within any one hour (COOKIE_STUFFING is 3 or
 * more: a page or extension dropping every affiliate's cookie). Read from the visitor's kept clicks
 * (its first and last ten), oldest first.
 */
export function mostAffiliatesWithinAnHour(clicks: VisitorClick[]): number {
  let most = 0;
  for (const [index, first] of clicks.entries()) {
    const within = clicks.slice(index).filter((click) => click.at.getTime() - first.at.getTime() <= HOUR_MS);
    most = Math.max(most, new Set(within.map((click) => click.affiliateId)).size);
  }
  return most;
}
