import { useState } from 'preact/hooks';
import { ok, type ApiClient, type PageProps, type Schemas } from '../client';
import { Field, FilterSelect, fieldsOf } from '../fields';
import { FormError } from '../forms';
import { paged, rowsOf } from '../paging';
import { money, saveAsFile } from '../money-and-files';
import { Action, ErrorBanner, Notice, Table, useLoad, useSubmit, when } from '../ui';

type Payout = Schemas['Payout'];
type Status = Payout['status'];

const PAGE_SIZE = 50;

/**
 * A run starts no payout after 5 s and answers what it made (POST /payouts); the next call carries
 * on. The page calls again until a call makes none, so one click pays every due commission; the
 * bound only keeps a runaway loop (a program with a very large backlog) from running forever, and
 * when it is reached the page says that due commissions may remain and offers to carry on.
 */
const MAX_RUN_CALLS = 20;

/** Every status of the document, with the caption of its list: a status the document adds fails to compile here. */
const CAPTIONS: Record<Status, string> = { PENDING: 'Drafts (to pay)', PAID: 'Paid', FAILED: 'Failed' };

/**
 * The monthly payout cycle: run a payout over the due commissions (one draft per affiliate and
 * currency, the plan's minimum payout applied by the API), export a draft as CSV for a mass-payout
 * tool, and mark it PAID (its commissions become PAID) or FAILED (they are DUE again, for a later run).
 */
export function Payouts({ client, can }: PageProps) {
  const [status, setStatus] = useState<Status | ''>('PENDING');
  // The cursors each page started after (the Link header's next of the page before): Previous page goes back one.
  const [pages, setPages] = useState<string[]>([]);
  const startingAfter = pages.at(-1);
  const payouts = useLoad(async () => {
    const { data, next } = await paged(
      client.GET('/api/v1/payouts', {
        params: { query: { limit: PAGE_SIZE, startingAfter, status: status || undefined } },
      }),
    );
    return { items: rowsOf(data), next };
  }, [status, startingAfter]);
  const rows = payouts.value?.items ?? [];
  const next = payouts.value?.next;
  const showStatus = (shown: Status | '') => {
    setStatus(shown);
    setPages([]);
  };
  return (
    <section>
      <h1>Payouts</h1>
      {can('createPayouts') ? (
        <RunPayouts
          client={client}
          onRun={() => {
            showStatus('PENDING');
            payouts.reload();
          }}
        />
      ) : null}
      <form class="inline" onSubmit={(event) => event.preventDefault()}>
        <FilterSelect id="payout-status" label="Show" value={status} onValue={showStatus} options={Object.keys(CAPTIONS) as Status[]} />
      </form>
      <ErrorBanner error={payouts.error} />
      <Table
        caption={status ? CAPTIONS[status] : 'Every payout'}
        rows={rows}
        empty={status === 'PENDING' ? 'No draft: run a payout to gather the due commissions.' : 'No payout.'}
        columns={[
          { title: 'Affiliate', value: (payout) => `${payout.payee.name} (${payout.payee.email})` },
          { title: 'Amount', value: (payout) => money(payout.amount, payout.currency) },
          { title: 'Commissions', value: (payout) => payout.commissions.length },
          { title: 'Paid to', value: (payout) => payeeAccount(payout) },
          { title: 'Status', value: (payout) => <span class={`status ${payout.status.toLowerCase()}`}>{payout.status}</span> },
          { title: 'Created', value: (payout) => when(payout.createdAt) },
          { title: 'Paid', value: (payout) => (payout.paidAt ? when(payout.paidAt) : '—') },
          { title: 'Reference', value: (payout) => payout.externalReference ?? '—' },
          {
            title: 'Actions',
            value: (payout) => <PayoutActions key={payout.id} client={client} can={can} payout={payout} onMarked={payouts.reload} />,
          },
        ]}
      />
      <div class="pager">
        {pages.length > 0 ? (
          <button type="button" onClick={() => setPages(pages.slice(0, -1))}>
            Previous page
          </button>
        ) : null}
        {next ? (
          <button type="button" onClick={() => setPages([...pages, next])}>
            Next page
          </button>
        ) : null}
      </div>
    </section>
  );
}

/** Where the money goes, as the affiliate gave it (the IBAN's last 4 only: the CSV carries it in full). */
function payeeAccount(payout: Payout): string {
  const details = payout.payee.payoutDetails;
  if (!details) return 'No payout details';
  const method = details.method.replace('_', ' ').toLowerCase();
  const account = details.ibanLast4 ? `IBAN ····${details.ibanLast4}` : details.email;
  return account ? `${method}: ${account}` : method;
}

function RunPayouts({ client, onRun }: { client: ApiClient; onRun: () => void }) {
  const [currency, setCurrency] = useState('');
  const [affiliateId, setAffiliateId] = useState('');
  const [created, setCreated] = useState<Payout[] | null>(null);
  const [unfinished, setUnfinished] = useState(false);
  const { error, submit } = useSubmit(async () => {
    setCreated(null);
    setUnfinished(false);
    const body: Schemas['CreatePayoutsBody'] = {
      ...(currency.trim() ? { currency: currency.trim().toUpperCase() } : {}),
      ...(affiliateId.trim() ? { affiliateId: affiliateId.trim() } : {}),
    };
    const made: Payout[] = [];
    let finished = false;
    for (let call = 0; call < MAX_RUN_CALLS && !finished; call += 1) {
      const batch = await ok(client.POST('/api/v1/payouts', { body }));
      made.push(...batch);
      finished = batch.length === 0;
    }
    setCreated(made);
    setUnfinished(!finished);
    onRun();
  });
  const field = fieldsOf(error);
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="run-payout-title">
      <h2 id="run-payout-title">Run a payout</h2>
      <p class="hint">
        Gathers every due commission (past its plan's hold, not held for review) into one draft per affiliate and currency; an affiliate
        under its plan's minimum payout waits for the next run.
      </p>
      <Field
        id="payout-currency"
        label="Only this currency (ISO code; empty: every currency)"
        size={5}
        maxLength={3}
        {...field('currency', currency, setCurrency)}
      />
      <Field
        id="payout-affiliate"
        label="Only this affiliate (its id; empty: every affiliate)"
        size={40}
        {...field('affiliateId', affiliateId, setAffiliateId)}
      />
      <button type="submit">Run payout</button>
      {created ? (
        <Notice>
          {created.length === 0
            ? 'No commission is due: no payout was created.'
            : `${created.length} draft payout${created.length === 1 ? '' : 's'} created: ${totals(created)}.`}
          {unfinished ? (
            <>
              {' '}
              The run stopped after {MAX_RUN_CALLS} calls: due commissions may remain. <button type="submit">Continue the run</button>
            </>
          ) : null}
        </Notice>
      ) : null}
      <FormError error={error} params={['currency', 'affiliateId']} />
    </form>
  );
}

/** What the drafts add up to, per currency (never added across currencies). */
function totals(payouts: Payout[]): string {
  const byCurrency = new Map<string, number>();
  for (const payout of payouts) byCurrency.set(payout.currency, (byCurrency.get(payout.currency) ?? 0) + payout.amount);
  return [...byCurrency].map(([currency, amount]) => money(amount, currency)).join(', ');
}

function PayoutActions({ client, can, payout, onMarked }: PageProps & { payout: Payout; onMarked: () => void }) {
  const [reference, setReference] = useState('');
  const [error, setError] = useState<unknown>(null);
  // Disabled while a mark is on its way: a second click would only meet the API's refusal.
  const [marking, setMarking] = useState(false);
  const who = payout.payee.name;
  const field = fieldsOf(error);
  const mark = async (status: 'PAID' | 'FAILED') => {
    setError(null);
    setMarking(true);
    try {
      const body: Schemas['UpdatePayoutBody'] = {
        payoutId: payout.id,
        status,
        ...(reference.trim() ? { externalReference: reference.trim() } : {}),
      };
      await ok(client.PUT('/api/v1/payouts', { body }));
      onMarked();
    } catch (failed) {
      setError(failed);
    } finally {
      setMarking(false);
    }
  };
  return (
    <>
      {can('exportPayout') ? (
        <Action
          label={`Export CSV for ${who}`}
          run={async () => {
            const csv = await ok(
              client.GET('/api/v1/payouts/export', {
                params: { query: { payoutId: payout.id } },
                headers: { accept: 'text/csv' },
                parseAs: 'text',
              }),
            );
            saveAsFile(`payout-${payout.id}.csv`, csv);
          }}
        />
      ) : null}
      {payout.status === 'PENDING' && can('updatePayout') ? (
        <>
          <Field
            id={`reference-${payout.id}`}
            label={`Transfer reference for ${who} (optional)`}
            size={16}
            {...field('externalReference', reference, setReference)}
          />
          <button type="button" disabled={marking} onClick={() => mark('PAID')}>
            Mark {who} paid
          </button>
          <button type="button" class="danger" disabled={marking} onClick={() => mark('FAILED')}>
            Mark {who} failed
          </button>
          <FormError error={error} params={['externalReference']} />
        </>
      ) : null}
    </>
  );
}
