import type { PortalSession } from '@affiliate/contracts';
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { call, query, type Credential } from '../api';
import { Action, ErrorBanner, Pager, Table, useLoad, when, type Column } from '../ui';

type Row = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** One resource of the public API: its list (the API's pagination) and its lookups (the API's query parameters). */
export type Resource = {
  title: string;
  path: string;
  searches: { param: string; label: string }[];
  columns: Column<Row>[];
  actions?: (credential: Credential, row: Row) => ComponentChildren;
};

/**
 * "View as affiliate": a portal session link made with the program's key (POST /affiliate-portal-sessions),
 * shown as a link to open in a new tab, which the affiliate would get from the program's site. It opens once, within 10 minutes.
 */
function ViewAsAffiliate({ credential, affiliate }: { credential: Credential; affiliate: Row }) {
  const [session, setSession] = useState<PortalSession | null>(null);
  if (session) {
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
      run={async () =>
        setSession((await call<PortalSession>(credential, 'POST', '/affiliate-portal-sessions', { affiliateId: affiliate.id })).items)
      }
    />
  );
}

export const RESOURCES: Record<string, Resource> = {
  affiliates: {
    title: 'Affiliates',
    path: '/affiliates',
    searches: [
      { param: 'email', label: 'email' },
      { param: 'id', label: 'id, click id or link' },
    ],
    columns: [
      { title: 'Name', value: (row) => `${row.firstName} ${row.lastName}` },
      { title: 'Email', value: (row) => row.email },
      { title: 'Status', value: (row) => row.status },
      { title: 'Plan', value: (row) => row.commissionPlan?.name ?? `own rate ${row.commissionRate} %` },
      { title: 'Links', value: (row) => (row.affiliateLinks ?? []).map((link: { link: string }) => link.link).join(', ') },
      { title: 'Created', value: (row) => when(row.createdAt) },
    ],
    actions: (credential, row) => <ViewAsAffiliate key={row.id} credential={credential} affiliate={row} />,
  },
  links: {
    title: 'Links',
    path: '/links',
    searches: [
      { param: 'link', label: 'slug' },
      { param: 'affiliateEmail', label: 'affiliate email' },
    ],
    columns: [
      { title: 'Slug', value: (row) => row.link },
      { title: 'Clicks', value: (row) => row.clicks },
      { title: 'Referrals', value: (row) => row.referrals },
      { title: 'Sales', value: (row) => row.sales },
      { title: 'Revenue', value: (row) => row.totalRevenue },
      { title: 'First URL', value: (row) => row.fullURLs?.[0]?.fullUrl ?? '—' },
    ],
  },
  codes: {
    title: 'Promotional codes',
    path: '/promotional-codes',
    searches: [
      { param: 'code', label: 'code' },
      { param: 'affiliateEmail', label: 'affiliate email' },
    ],
    columns: [
      { title: 'Code', value: (row) => row.code },
      { title: 'Coupon', value: (row) => row.coupon?.name ?? '—' },
      { title: 'Active', value: (row) => (row.active ? 'yes' : 'no') },
      { title: 'Redeemed', value: (row) => `${row.timesRedeemed}${row.maxRedemptions === null ? '' : ` of ${row.maxRedemptions}`}` },
      { title: 'Affiliate', value: (row) => row.affiliate?.email ?? '—' },
    ],
  },
  referrals: {
    title: 'Referrals',
    path: '/referrals',
    searches: [
      { param: 'email', label: 'email' },
      { param: 'affiliateId', label: 'affiliate id' },
    ],
    columns: [
      { title: 'Email', value: (row) => row.email },
      { title: 'Name', value: (row) => row.name ?? '—' },
      { title: 'Status', value: (row) => row.status },
      { title: 'Affiliate', value: (row) => row.affiliateId },
      { title: 'Created', value: (row) => when(row.createdAt) },
    ],
  },
  sales: {
    title: 'Sales',
    path: '/sales',
    searches: [
      { param: 'affiliateId', label: 'affiliate id' },
      { param: 'id', label: 'sale id' },
    ],
    columns: [
      { title: 'Paid', value: (row) => when(row.paidAt ?? row.createdAt) },
      { title: 'Amount', value: (row) => `${row.totalEarned} ${row.currency}` },
      { title: 'Commission', value: (row) => `${row.commissionEarned} (${row.commissions?.[0]?.status ?? 'none'})` },
      { title: 'Trigger', value: (row) => row.paymentTrigger },
      { title: 'Affiliate', value: (row) => row.affiliateId },
    ],
  },
};

export function Browse({ credential, resource }: { credential: Credential; resource: Resource }) {
  const [param, setParam] = useState(resource.searches[0]?.param ?? '');
  const [text, setText] = useState('');
  const [search, setSearch] = useState<{ param: string; value: string } | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const rows = useLoad(async () => {
    const parameters = search ? { [search.param]: search.value } : { limit: 50, startingAfter: cursor };
    const answer = await call<Row | Row[] | null>(credential, 'GET', `${resource.path}${query(parameters)}`);
    const items = answer.items === null ? [] : Array.isArray(answer.items) ? answer.items : [answer.items];
    return { items, next: search ? null : answer.next };
  }, [resource.path, search, cursor]);
  return (
    <section>
      <h1>{resource.title}</h1>
      <form
        class="filters"
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          setCursor(null);
          setSearch(text.trim() ? { param, value: text.trim() } : null);
        }}
      >
        <label for="search-by">Search by</label>
        <select id="search-by" value={param} onChange={(event) => setParam((event.target as HTMLSelectElement).value)}>
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
          resource.actions
            ? [...resource.columns, { title: 'Portal', value: (row) => resource.actions?.(credential, row) }]
            : resource.columns
        }
        empty="Nothing found."
      />
      <Pager cursor={cursor} next={rows.value?.next} onPage={setCursor} />
    </section>
  );
}
