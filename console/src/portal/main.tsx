import 'uplot/dist/uPlot.min.css';
import '../styles.css';
import './portal.css';
import type {
  DailyActivity,
  PortalCode,
  PortalCommission,
  PortalCoupon,
  PortalLink,
  PortalPayout,
  PortalReferral,
  PortalSale,
  PortalSessionInfo,
  PortalStatementRow,
} from '@affiliate/contracts';
import { minorUnitDigits } from '@affiliate/contracts/currency';
import { render } from 'preact';
import { useMemo, useState } from 'preact/hooks';
import { Chart, ErrorBanner, Notice, Table, useLoad, useSubmit, when } from '../ui';
import { portalCall, rememberCsrfToken } from './portal-api';

/**
 * The affiliate portal: one affiliate's own links, codes, activity, earnings and payouts, opened by
 * a session link. It calls /portal/api only, which takes the affiliate and program from the session.
 */
// In the currency's own decimals (JPY 0, USD 2, KWD 3), from the platform's one currency table (without the rest of the contracts).
const money = (amount: number, currency: string) => `${amount.toFixed(minorUnitDigits(currency))} ${currency}`;
const discountOf = (coupon: Pick<PortalCoupon, 'couponType' | 'percentOff' | 'amountOff' | 'currency'>) =>
  coupon.couponType === 'FLAT' ? `${coupon.amountOff ?? 0} ${coupon.currency ?? ''} off` : `${coupon.percentOff ?? 0} % off`;

/**
 * A table's empty text once its rows have arrived, "Loading…" before: an affiliate must not read
 * "No sale yet." while its sales are still on their way (nor after they failed to load).
 */
const emptyOnceLoaded = (load: { value: unknown; error: unknown }, empty: string) =>
  load.value !== undefined ? empty : load.error ? 'Not loaded.' : 'Loading…';

function Links({ session }: { session: PortalSessionInfo }) {
  const links = useLoad(() => portalCall<PortalLink[]>('GET', '/links'), []);
  const [copied, setCopied] = useState<string | null>(null);
  const [slug, setSlug] = useState('');
  const adding = useSubmit(async () => {
    await portalCall('POST', '/links', { link: slug.trim() });
    setSlug('');
    links.reload();
  });
  const rows = (links.value ?? []).flatMap((link) => link.fullURLs.map((url) => ({ link, url: url.fullUrl })));
  return (
    <section aria-labelledby="links-heading">
      <h2 id="links-heading">Your links</h2>
      <ErrorBanner error={links.error} />
      <Table
        caption="Share these links: every visit, sign-up and sale through them counts for you"
        rows={rows}
        empty={emptyOnceLoaded(links, 'You have no links yet.')}
        columns={[
          { title: 'Link', value: (row) => row.link.link },
          {
            title: 'Full URL',
            value: (row) => (
              <span class="copy">
                <input readOnly value={row.url} aria-label={`Full URL of ${row.link.link}`} size={Math.min(60, row.url.length)} />
                <button
                  type="button"
                  onClick={async () => {
                    await navigator.clipboard?.writeText(row.url).catch(() => undefined);
                    setCopied(row.url);
                  }}
                >
                  Copy
                </button>
              </span>
            ),
          },
          { title: 'Clicks', value: (row) => row.link.clicks },
          { title: 'Referrals', value: (row) => row.link.referrals },
          { title: 'Sales', value: (row) => row.link.sales },
        ]}
      />
      {copied ? <Notice>Copied {copied}</Notice> : null}
      {session.program.affiliatesMayAddLinks ? (
        <form class="inline" onSubmit={adding.submit}>
          <label for="new-link">New link (letters, numbers and hyphens)</label>
          <input id="new-link" value={slug} required onInput={(event) => setSlug((event.target as HTMLInputElement).value)} />
          <button type="submit">Add link</button>
        </form>
      ) : null}
      <ErrorBanner error={adding.error} />
    </section>
  );
}

function Activity() {
  const activity = useLoad(() => portalCall<DailyActivity[]>('GET', '/activity'), []);
  const chart = useMemo(() => {
    const days = activity.value ?? [];
    return {
      days: days.map((day) => Date.parse(`${day.day}T00:00:00Z`) / 1000),
      series: [
        { label: 'clicks', values: days.map((day) => day.clicks), color: '#1d4ed8' },
        { label: 'referrals', values: days.map((day) => day.referrals), color: '#047857' },
        { label: 'sales', values: days.map((day) => day.sales), color: '#b45309' },
      ],
    };
  }, [activity.value]);
  return (
    <section aria-labelledby="activity-heading">
      <h2 id="activity-heading">Activity</h2>
      <ErrorBanner error={activity.error} />
      {activity.value ? (
        <Chart title="Clicks, referrals and sales per day (last 30 days)" days={chart.days} series={chart.series} />
      ) : (
        <p>Loading…</p>
      )}
    </section>
  );
}

function Earnings() {
  const statement = useLoad(() => portalCall<PortalStatementRow[]>('GET', '/statement'), []);
  const commissions = useLoad(() => portalCall<PortalCommission[]>('GET', '/commissions'), []);
  const payouts = useLoad(() => portalCall<PortalPayout[]>('GET', '/payouts'), []);
  return (
    <section aria-labelledby="earnings-heading">
      <h2 id="earnings-heading">Earnings</h2>
      <ErrorBanner error={statement.error ?? commissions.error ?? payouts.error} />
      <Table
        caption="Statement per currency"
        rows={statement.value ?? []}
        empty={emptyOnceLoaded(statement, 'No commission yet.')}
        columns={[
          { title: 'Currency', value: (row) => row.currency },
          { title: 'Earned', value: (row) => money(row.earned, row.currency) },
          { title: 'Pending', value: (row) => money(row.pending, row.currency) },
          { title: 'Due', value: (row) => money(row.due, row.currency) },
          { title: 'Paid', value: (row) => money(row.paid, row.currency) },
          { title: 'Owed to you now', value: (row) => money(row.balance, row.currency) },
        ]}
      />
      <Table
        caption="Commissions"
        rows={commissions.value ?? []}
        empty={emptyOnceLoaded(commissions, 'No commission yet.')}
        columns={[
          { title: 'Amount', value: (row) => money(row.amount, row.currency) },
          { title: 'Status', value: (row) => row.status },
          { title: 'Available', value: (row) => when(row.availableAt) },
          { title: 'In a payout', value: (row) => (row.payoutId ? 'yes' : 'no') },
        ]}
      />
      <Table
        caption="Payouts"
        rows={payouts.value ?? []}
        empty={emptyOnceLoaded(payouts, 'No payout yet.')}
        columns={[
          { title: 'Amount', value: (row) => money(row.amount, row.currency) },
          { title: 'Status', value: (row) => row.status },
          { title: 'Created', value: (row) => when(row.createdAt) },
          { title: 'Paid', value: (row) => when(row.paidAt) },
        ]}
      />
    </section>
  );
}

function Customers() {
  const referrals = useLoad(() => portalCall<PortalReferral[]>('GET', '/referrals'), []);
  const sales = useLoad(() => portalCall<PortalSale[]>('GET', '/sales'), []);
  return (
    <section aria-labelledby="customers-heading">
      <h2 id="customers-heading">Referrals and sales</h2>
      <ErrorBanner error={referrals.error ?? sales.error} />
      <Table
        caption="Sales"
        rows={sales.value ?? []}
        empty={emptyOnceLoaded(sales, 'No sale yet.')}
        columns={[
          { title: 'Paid', value: (row) => when(row.paidAt) },
          { title: 'Amount', value: (row) => money(row.totalEarned, row.currency) },
          { title: 'Commission', value: (row) => money(row.commissionEarned, row.currency) },
          { title: 'Commission status', value: (row) => row.commissionStatus ?? '—' },
          { title: 'Code', value: (row) => row.promoCode ?? '—' },
        ]}
      />
      <Table
        caption="Referrals"
        rows={referrals.value ?? []}
        empty={emptyOnceLoaded(referrals, 'No referral yet.')}
        columns={[
          { title: 'Customer', value: (row) => row.email },
          { title: 'Status', value: (row) => row.status },
          { title: 'Since', value: (row) => when(row.createdAt) },
        ]}
      />
    </section>
  );
}

function Codes({ session }: { session: PortalSessionInfo }) {
  const codes = useLoad(() => portalCall<PortalCode[]>('GET', '/codes'), []);
  const coupons = session.program.coupons;
  const [couponId, setCouponId] = useState(coupons[0]?.id ?? '');
  const [code, setCode] = useState('');
  const [created, setCreated] = useState<string | null>(null);
  const creating = useSubmit(async () => {
    const made = await portalCall<PortalCode>('POST', '/codes', { couponId, code: code.trim() });
    setCreated(made.code);
    setCode('');
    codes.reload();
  });
  return (
    <section aria-labelledby="codes-heading">
      <h2 id="codes-heading">Your promotional codes</h2>
      <ErrorBanner error={codes.error} />
      <Table
        caption="Codes your customers can type at checkout"
        rows={codes.value ?? []}
        empty={emptyOnceLoaded(codes, 'You have no codes yet.')}
        columns={[
          { title: 'Code', value: (row) => <code>{row.code}</code> },
          { title: 'Discount', value: (row) => `${row.coupon.name ?? ''} (${discountOf(row.coupon)})` },
          { title: 'Used', value: (row) => row.timesRedeemed },
          { title: 'Active', value: (row) => (row.active ? 'yes' : 'no') },
          { title: 'Made by', value: (row) => (row.isAffiliateGenerated ? 'you' : 'the program') },
        ]}
      />
      {coupons.length > 0 ? (
        <form class="inline" onSubmit={creating.submit}>
          <label for="code-coupon">Discount</label>
          <select id="code-coupon" value={couponId} onChange={(event) => setCouponId((event.target as HTMLSelectElement).value)}>
            {coupons.map((coupon) => (
              <option key={coupon.id} value={coupon.id}>
                {coupon.name ?? coupon.id} ({discountOf(coupon)})
              </option>
            ))}
          </select>
          <label for="code-text">Code</label>
          <input
            id="code-text"
            value={code}
            required
            maxLength={64}
            onInput={(event) => setCode((event.target as HTMLInputElement).value)}
          />
          <button type="submit">Create code</button>
        </form>
      ) : (
        <p class="hint">The program offers no discount for your own codes yet.</p>
      )}
      {created && creating.done ? <Notice>Code {created} created</Notice> : null}
      <ErrorBanner error={creating.error} />
    </section>
  );
}

function PayoutDetailsForm({ session }: { session: PortalSessionInfo }) {
  const current = session.affiliate.payoutDetails;
  const [method, setMethod] = useState(current?.method ?? 'PAYPAL');
  const [email, setEmail] = useState(current?.email ?? '');
  const [accountHolder, setAccountHolder] = useState(current?.accountHolder ?? '');
  const [iban, setIban] = useState('');
  const saving = useSubmit(async () => {
    const details: Record<string, string> = { method };
    if (email.trim()) details.email = email.trim();
    if (accountHolder.trim()) details.accountHolder = accountHolder.trim();
    if (iban.trim()) details.iban = iban.trim();
    await portalCall('PUT', '/payout-details', { payoutDetails: details });
  });
  return (
    <section aria-labelledby="payout-heading">
      <h2 id="payout-heading">Payout details</h2>
      {current?.ibanLast4 ? <p class="hint">Bank account on file ends in {current.ibanLast4}.</p> : null}
      <form onSubmit={saving.submit} class="panel">
        <label for="payout-method">Method</label>
        <select
          id="payout-method"
          value={method}
          onChange={(event) => setMethod((event.target as HTMLSelectElement).value as typeof method)}
        >
          <option value="PAYPAL">PayPal</option>
          <option value="WISE">Wise</option>
          <option value="BANK_TRANSFER">Bank transfer</option>
          <option value="OTHER">Other</option>
        </select>
        <label for="payout-email">Payout email (PayPal, Wise)</label>
        <input id="payout-email" type="email" value={email} onInput={(event) => setEmail((event.target as HTMLInputElement).value)} />
        <label for="payout-holder">Account holder (bank transfer)</label>
        <input id="payout-holder" value={accountHolder} onInput={(event) => setAccountHolder((event.target as HTMLInputElement).value)} />
        <label for="payout-iban">IBAN (bank transfer)</label>
        <input id="payout-iban" value={iban} autoComplete="off" onInput={(event) => setIban((event.target as HTMLInputElement).value)} />
        <p>
          <button type="submit">Save payout details</button>
        </p>
      </form>
      {saving.done ? <Notice>Payout details saved</Notice> : null}
      <ErrorBanner error={saving.error} />
    </section>
  );
}

function Portal() {
  const session = useLoad(async () => {
    const info = await portalCall<PortalSessionInfo>('GET', '/session');
    rememberCsrfToken(info.csrfToken);
    return info;
  }, []);
  const [signedOut, setSignedOut] = useState(false);
  const value = session.value;
  if (signedOut) {
    return (
      <main>
        <h1>You have signed out</h1>
        <p>Open the affiliate portal again with a new link from the program.</p>
        {value?.returnUrl ? <a href={value.returnUrl}>Back to the program's site</a> : null}
      </main>
    );
  }
  return (
    <>
      <header>
        <p class="brand">{value ? `${value.program.name} · affiliate portal` : 'Affiliate portal'}</p>
        <nav aria-label="Sections">
          <a href="#links-heading">Links</a>
          <a href="#codes-heading">Codes</a>
          <a href="#activity-heading">Activity</a>
          <a href="#earnings-heading">Earnings</a>
          <a href="#customers-heading">Referrals and sales</a>
          <a href="#payout-heading">Payout details</a>
          {value?.returnUrl ? <a href={value.returnUrl}>Back to the program's site</a> : null}
        </nav>
        <button
          type="button"
          onClick={async () => {
            await portalCall('POST', '/sign-out').catch(() => undefined);
            setSignedOut(true);
          }}
        >
          Sign out
        </button>
      </header>
      <main>
        <ErrorBanner error={session.error} />
        {value ? (
          <>
            <h1>
              Welcome, {value.affiliate.firstName} {value.affiliate.lastName}
            </h1>
            <Links session={value} />
            <Codes session={value} />
            <Activity />
            <Earnings />
            <Customers />
            <PayoutDetailsForm session={value} />
          </>
        ) : (
          <p>Loading…</p>
        )}
      </main>
    </>
  );
}

render(<Portal />, document.getElementById('app') as HTMLElement);
