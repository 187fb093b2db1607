import { badRequest } from '../errors';

/** A period of a list filter: from `gte` (included) to `lt` (excluded); either end may be open. */
export type Period = { gte?: Date; lt?: Date };

/**
 * The `<field>[gte]` and `<field>[lt]` parameters of a parsed query (contracts' dateRange) as a
 * period; undefined when neither was given. A period that ends before it starts is a 400: it can
 * only be a mistake, and an empty list would hide it. One that ends where it starts (gte = lt) is
 * empty, not reversed: it answers an empty list, on every list alike.
 */
export function periodOf(query: Record<string, unknown>, field: string): Period | undefined {
  const gte = query[`${field}[gte]`];
  const lt = query[`${field}[lt]`];
  if (typeof gte !== 'string' && typeof lt !== 'string') return undefined;
  const period: Period = {
    ...(typeof gte === 'string' ? { gte: new Date(gte) } : {}),
    ...(typeof lt === 'string' ? { lt: new Date(lt) } : {}),
  };
  if (period.gte && period.lt && period.gte > period.lt)
    throw badRequest(`${field}[gte] must not be after ${field}[lt]`, 'parameter_invalid', `${field}[gte]`);
  return period;
}

/** A period as the condition on one date field of a database filter. */
export function withinPeriod(period: Period): { $gte?: Date; $lt?: Date } {
  return { ...(period.gte ? { $gte: period.gte } : {}), ...(period.lt ? { $lt: period.lt } : {}) };
}

/** "a", "a or b", "a, b or c": the parameters of a lookup, as a refusal names them. */
const either = (names: readonly string[]): string =>
  names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;

/**
 * A lookup by identifier (id, email, code…) answers one object, not a list: any list parameter beside
 * it (a filter, a period, a page, format=csv) could only be a mistake, and would be silently ignored,
 * so it is a 400 naming the first such parameter and the lookup. `lookup` lists the parameters that
 * belong to the lookup (they may be given together); `named` is how the refusal names the lookup
 * (by default, its parameters). format=json asks for what a lookup answers anyway.
 */
export function refuseListParametersBeside(query: Record<string, unknown>, lookup: readonly string[], named = either(lookup)): void {
  const listOnly = Object.keys(query).find(
    (key) => query[key] !== undefined && !lookup.includes(key) && !(key === 'format' && query[key] !== 'csv'),
  );
  if (listOnly)
    throw badRequest(
      `${listOnly === 'format' ? 'format=csv' : listOnly} applies to the list: it does not combine with ${named}`,
      'parameter_invalid',
      listOnly,
    );
}
