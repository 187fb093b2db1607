import { ok } from './client';

/**
 * The id to pass as `startingAfter` for the next page: the API pages by the Link header
 * (`<…/api/v1/referrals?limit=50&startingAfter=…>; rel="next"`), absent on the last page.
 */
export function nextCursor(response: Response): string | null {
  const link = response.headers.get('link');
  const next = link?.split(',').find((part) => /;\s*rel="?next"?/.test(part));
  const target = next ? /<([^>]*)>/.exec(next)?.[1] : undefined;
  return target ? new URL(target, window.location.origin).searchParams.get('startingAfter') : null;
}

/**
 * A page of a list, as `ok` gives its data, with the cursor of the page after it:
 * `const { data, next } = await paged(client.GET('/api/v1/referrals', { params: { query: { limit: 50 } } }))`.
 */
export async function paged<Data>(
  answer: Promise<{ data?: Data; error?: unknown; response: Response }>,
): Promise<{ data: Data; next: string | null }> {
  let next: string | null = null;
  const data = await ok(
    answer.then((settled) => {
      if (settled.response.ok) next = nextCursor(settled.response);
      return settled;
    }),
  );
  return { data, next };
}

/**
 * A lookup's answer as rows: the routes that page also look one object up (`id=`, `email=`), answering
 * that object, or null when nothing matches (the specification's 200 null).
 */
export function rowsOf<Row>(data: Row | Row[] | null | undefined): Row[] {
  if (data === null || data === undefined) return [];
  return Array.isArray(data) ? data : [data];
}

/** A row of a list route's answer (`Plan` of `Plan | Plan[]`, the lookup's one object beside the page). */
type Item<Data> = Data extends readonly (infer Row)[] ? Row : never;

/**
 * Every row of a list, page after page to the last (the Link header's next), for the choosers and
 * lists a page shows whole (a program's plans, its coupons, the affiliates to pick from): no page
 * size ever hides a row. `load` asks for the page after `startingAfter` (undefined: the first).
 */
export async function everyPage<Data>(
  load: (startingAfter: string | undefined) => Promise<{ data?: Data; error?: unknown; response: Response }>,
): Promise<Item<Data>[]> {
  const rows: Item<Data>[] = [];
  let cursor: string | undefined;
  do {
    const { data, next } = await paged(load(cursor));
    // A list route's data is its rows, or the one object of a lookup (never asked for here): rowsOf covers both.
    rows.push(...(rowsOf(data) as Item<Data>[]));
    cursor = next ?? undefined;
  } while (cursor);
  return rows;
}
