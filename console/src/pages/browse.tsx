import type { ComponentChildren, JSX } from 'preact';
import { useState } from 'preact/hooks';
import { ok, type ApiClient, type PageProps, type Schemas } from '../client';
import { paged, rowsOf } from '../paging';
import { Action, ErrorBanner, Pager, Table, useLoad, when, type Column } from '../ui';

/** A list's query: a page (limit, startingAfter), or one of the resource's lookups (`email`, `id`…). */
type Query<Param extends string> = Partial<Record<Param, string>> | { limit: number; startingAfter?: string | undefined };

/**
 * One resource of the public API: its list (the API's pagination) and its lookups (the API's query
 * parameters); `load` is the one call, so its rows have the document's type for that path.
 */
type Resource<Row, Param extends string> = {
  title: string;
  searches: { param: Param; label: string }[];
  load: (client: ApiClient, query: Query<Param>) => Promise<{ data: Row | Row[] | null; next: string | null }>;
  columns: Column<Row>[];
  actions?: { title: string; cell: (props: PageProps, row: Row) => ComponentChildren };
};

/** A resource's page, as the navigation lists it. */
export type BrowsePage = { title: string; Page: (props: PageProps) => JSX.Element };

// A computed key of a union type widens to an index signature; the value is one of the lookups all the same.
const lookup = <Param extends string>(param: Param, value: string) => ({ [param]: value }) as Partial<Record<Param, string>>;

/**
 * "View as affiliate": a portal session link made with the program's key (POST /affiliate-portal-sessions),
 * shown as a link to open in a new tab, which the affiliate would get from the program's site. It opens once, within 10 minutes.
 */
function ViewAsAffiliate({ client, affiliate }: PageProps & { affiliate: Schemas['Affiliate'] }) {
  const [session, setSession] = useState<Schemas['PortalSession'] | null>(null);
  if (session?.url) {
    return (
      <a href={session.url} target="_blank" rel="noopener noreferrer">
        Open the portal of {affiliate.firstName} {affiliate.lastName}
      </a>
    );
  }
  if (affiliate.status !== 'ACTIVE') return <span class="hint">no portal ({affiliate.status})</span>;
  return (
    <Action
      label={`View as ${affiliate.firstName} ${affiliate.lastName}`}
      run={async () => setSession(await ok(client.POST('/api/v1/affiliate-portal-sessions', { body: { affiliateId: affiliate.id } })))}
    />
  );
}

function Browse<Row, Param extends string>({ client, can, resource }: PageProps & { resource: Resource<Row, Param> }) {
  const [param, setParam] = useState<Param | undefined>(resource.searches[0]?.param);
  const [text, setText] = useState('');
  const [search, setSearch] = useState<{ param: Param; value: string } | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const rows = useLoad(async () => {
    const answer = await resource.load(
      client,
      search ? lookup(search.param, search.value) : { limit: 50, startingAfter: cursor ?? undefined },
    );
    return { items: rowsOf(answer.data), next: search ? null : answer.next };
  }, [resource, search, cursor]);
  const actions = resource.actions;
  return (
    <section>
      <h1>{resource.title}</h1>
      <form
        class="filters"
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          setCursor(null);
          setSearch(text.trim() && param ? { param, value: text.trim() } : null);
        }}
      >
        <label for="search-by">Search by</label>
        <select
          id="search-by"
          value={param}
          onChange={(event) => {
            const chosen = (event.target as HTMLSelectElement).value;
            setParam(resource.searches.find((each) => each.param === chosen)?.param);
          }}
        >
          {resource.searches.map((each) => (
            <option key={each.param} value={each.param}>
              {each.label}
            </option>
          ))}
        </select>
        <label for="search-text">Value</label>
        <input id="search-text" value={text} onInput={(event) => setText((event.target as HTMLInputElement).value)} />
        <button type="submit">Search</button>
        {search ? (
          <button
            type="button"
            onClick={() => {
              setText('');
              setSearch(null);
            }}
          >
            Show all
          </button>
        ) : null}
      </form>
      <ErrorBanner error={rows.error} />
      <Table
        caption={search ? `${resource.title} with ${search.param} ${search.value}` : `${resource.title}, newest first`}
        rows={rows.value?.items ?? []}
        columns={
          actions ? [...resource.columns, { title: actions.title, value: (row) => actions.cell({ client, can }, row) }] : resource.columns
        }
        empty="Nothing found."
      />
      <Pager cursor={cursor} next={rows.value?.next} onPage={setCursor} />
    </section>
  );
}

/** A resource as a page of the console: its Browse, with the rows the document gives its path. */
function browsing<Row, Param extends string>(resource: Resource<Row, Param>): BrowsePage {
  return { title: resource.title, Page: (props: PageProps) => <Browse {...props} resource={resource} /> };
}

export const RESOURCES: Record<string, BrowsePage> = {
  affiliates: browsing({
    title: 'Affiliates',
    searches: [
      { param: 'email', label: 'email' },
      { param: 'id', label: 'id, click id or link' },
    ],
    load: (client, query) => paged(client.GET('/api/v1/affiliates', { params: { query } })),
    columns: [
      { title: 'Name', value: (row) => `${row.firstName} ${row.lastName}` },
      { title: 'Email', value: (row) => row.email },
      { title: 'Status', value: (row) => row.status },
      { title: 'Plan', value: (row) => row.commissionPlan?.name ?? `own rate ${row.commissionRate} %` },
      { title: 'Links', value: (row) => row.affiliateLinks.map((link) => link.link).join(', ') },
      { title: 'Created', value: (row) => when(row.createdAt) },
    ],
    actions: {
      title: 'Portal',
      cell: (props, row) =>
        props.can('createAffiliatePortalSession') ? <ViewAsAffiliate key={row.id} {...props} affiliate={row} /> : null,
    },
  }),
  links: browsing({
    title: 'Links',
    searches: [
      { param: 'link', label: 'slug' },
      { param: 'affiliateEmail', label: 'affiliate email' },
    ],
    load: (client, query) => paged(client.GET('/api/v1/links', { params: { query } })),
    columns: [
      { title: 'Slug', value: (row) => row.link },
      { title: 'Clicks', value: (row) => row.clicks },
      { title: 'Referrals', value: (row) => row.referrals },
      { title: 'Sales', value: (row) => row.sales },
      { title: 'Revenue', value: (row) => row.totalRevenue },
      { title: 'First URL', value: (row) => row.fullURLs[0]?.fullUrl ?? '—' },
    ],
  }),
  codes: browsing({
    title: 'Promotional codes',
    searches: [
      { param: 'code', label: 'code' },
      { param: 'affiliateEmail', label: 'affiliate email' },
    ],
    load: (client, query) => paged(client.GET('/api/v1/promotional-codes', { params: { query } })),
    columns: [
      { title: 'Code', value: (row) => row.code },
      { title: 'Coupon', value: (row) => row.coupon.name ?? '—' },
      { title: 'Active', value: (row) => (row.active ? 'yes' : 'no') },
      { title: 'Redeemed', value: (row) => `${row.timesRedeemed}${row.maxRedemptions === null ? '' : ` of ${row.maxRedemptions}`}` },
      { title: 'Affiliate', value: (row) => row.affiliate?.email ?? '—' },
    ],
  }),
  referrals: browsing({
    title: 'Referrals',
    searches: [
      { param: 'email', label: 'email' },
      { param: 'affiliateId', label: 'affiliate id' },
    ],
    load: (client, query) => paged(client.GET('/api/v1/referrals', { params: { query } })),
    columns: [
      { title: 'Email', value: (row) => row.email },
      { title: 'Name', value: (row) => row.name ?? '—' },
      { title: 'Status', value: (row) => row.status },
      { title: 'Affiliate', value: (row) => row.affiliateId },
      { title: 'Created', value: (row) => when(row.createdAt) },
    ],
  }),
  sales: browsing({
    title: 'Sales',
    searches: [
      { param: 'affiliateId', label: 'affiliate id' },
      { param: 'id', label: 'sale id' },
    ],
    load: (client, query) => paged(client.GET('/api/v1/sales', { params: { query } })),
    columns: [
      { title: 'Paid', value: (row) => when(row.paidAt) },
      { title: 'Amount', value: (row) => `${row.totalEarned} ${row.currency}` },
      { title: 'Commission', value: (row) => `${row.commissionEarned} (${row.commissions[0]?.status ?? 'none'})` },
      { title: 'Trigger', value: (row) => row.paymentTrigger },
      { title: 'Affiliate', value: (row) => row.affiliateId },
    ],
  }),
};
