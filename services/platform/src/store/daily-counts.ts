const DAY_MS = 24 * 60 * 60 * 1000;

/** Every UTC day (YYYY-MM-DD) the period [from, to) touches, oldest first: the x axis of a summary's charts. */
export function utcDaysOf(from: Date, to: Date): string[] {
  const days: string[] = [];
  for (let start = Math.floor(from.getTime() / DAY_MS) * DAY_MS; start < to.getTime(); start += DAY_MS) {
    days.push(new Date(start).toISOString().slice(0, 10));
  }
  return days;
}

/**
 * An aggregation expression: the UTC day (YYYY-MM-DD) of the date `field` (`'$createdAt'`) when it
 * falls in [from, to), else null. Grouping by it counts a whole program in one pass: the documents of
 * the period by day, and the others (null) for the totals.
 */
export function utcDayWithin(field: string, from: Date, to: Date) {
  return { $cond: [{ $and: [{ $gte: [field, from] }, { $lt: [field, to] }] }, utcDayOf(field), null] };
}

/** An aggregation expression: the UTC day (YYYY-MM-DD) of a date expression. */
export const utcDayOf = (date: unknown) => ({ $dateToString: { format: '%Y-%m-%d', date } });

/** One row per day of `days` with its count from `counts` (absent: 0): a series with no hole for a chart. */
export function createdPerDay(days: string[], counts: Map<string, number>): { day: string; created: number }[] {
  return days.map((day) => ({ day, created: counts.get(day) ?? 0 }));
}
