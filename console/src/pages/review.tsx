import type { CommissionListItem, Program, RiskAction, RiskSignalType } from '@affiliate/contracts';
import { useState } from 'preact/hooks';
import { call, type Credential } from '../api';
import { Action, ErrorBanner, Notice, Pager, Table, useLoad, useProgramSettingsForm, when } from '../ui';

const ACTIONS: RiskAction[] = ['OFF', 'FLAG', 'HOLD', 'VOID'];
/** A program that never set its risk settings has FLAG everywhere (the contracts' RISK_DEFAULTS; not imported, to keep node code out of the bundle). */
const FLAG_EVERYWHERE: Record<RiskSignalType, RiskAction> = {
  SELF_REFERRAL: 'FLAG',
  CUSTOMER_OF_ANOTHER_AFFILIATE: 'FLAG',
  FAST_CONVERSION: 'FLAG',
  DISPOSABLE_EMAIL: 'FLAG',
  COOKIE_STUFFING: 'FLAG',
  OVER_AUTO_APPROVAL_LIMIT: 'FLAG',
};

/**
 * The review queue: the program's HELD commissions with the signals that held them, released or
 * voided with a note (each decision records this key and the note), and the risk settings that
 * decide what a signal does.
 */
export function Review({ credential }: { credential: Credential }) {
  const [cursor, setCursor] = useState<string | null>(null);
  const [note, setNote] = useState('');
  const queue = useLoad(
    async () =>
      call<CommissionListItem[]>(
        credential,
        'GET',
        `/commissions?status=HELD&limit=50${cursor ? `&startingAfter=${encodeURIComponent(cursor)}` : ''}`,
      ),
    [cursor],
  );
  const program = useLoad(async () => (await call<Program>(credential, 'GET', '/program')).items, []);
  const decide = (path: string, commission: CommissionListItem, field: 'note' | 'reason') => async () => {
    await call(credential, 'POST', path, {
      saleId: commission.saleId,
      commissionId: commission.id,
      ...(note.trim() ? { [field]: note.trim() } : {}),
    });
    queue.reload();
  };
  return (
    <section>
      <h1>Fraud review</h1>
      <ErrorBanner error={queue.error ?? program.error} />
      <label for="review-note">Note or reason for the next release or void (a void needs one)</label>
      <input
        id="review-note"
        type="text"
        maxLength={500}
        value={note}
        onInput={(event) => setNote((event.target as HTMLInputElement).value)}
      />
      <Table
        caption="Held commissions"
        rows={queue.value?.items ?? []}
        empty="No commission is held for review."
        columns={[
          { title: 'Sale', value: (commission) => <code>{commission.saleId}</code> },
          { title: 'Affiliate', value: (commission) => <code>{commission.affiliateId}</code> },
          { title: 'Amount', value: (commission) => `${commission.amount} ${commission.currency}` },
          {
            title: 'Signals',
            value: (commission) => (
              <ul>
                {commission.risk.signals.map((signal) => (
                  <li key={signal.type}>
                    <strong>{signal.type}</strong>: {signal.detail}
                  </li>
                ))}
              </ul>
            ),
          },
          { title: 'Held since', value: (commission) => when(commission.decisions?.at(-1)?.at) },
          {
            title: 'Decision',
            value: (commission) => (
              <>
                <Action label={`Release ${commission.id.slice(0, 8)}`} run={decide('/commissions/release', commission, 'note')} />
                <Action kind="danger" label={`Void ${commission.id.slice(0, 8)}`} run={decide('/commissions/void', commission, 'reason')} />
              </>
            ),
          },
        ]}
      />
      <Pager cursor={cursor} next={queue.value?.next} onPage={setCursor} />
      {program.value ? <RiskSettings credential={credential} program={program.value} onSaved={program.reload} /> : null}
    </section>
  );
}

function RiskSettings({ credential, program, onSaved }: { credential: Credential; program: Program; onSaved: () => void }) {
  const [actions, setActions] = useState(program.riskActions ?? FLAG_EVERYWHERE);
  const [limit, setLimit] = useState(program.maxAutoApprovedCommission == null ? '' : String(program.maxAutoApprovedCommission));
  const [minimum, setMinimum] = useState(program.minClickToConversionSeconds == null ? '' : String(program.minClickToConversionSeconds));
  const { error, saved, save } = useProgramSettingsForm(credential, onSaved, () => ({
    riskActions: actions,
    maxAutoApprovedCommission: limit === '' ? null : Number(limit),
    minClickToConversionSeconds: minimum === '' ? null : Number(minimum),
  }));
  return (
    <form class="panel" onSubmit={save}>
      <h2>Risk settings</h2>
      <p>What each signal does: OFF (not looked for), FLAG (recorded only), HOLD (held for review here), VOID (voided at once).</p>
      {(Object.keys(actions) as RiskSignalType[]).map((type) => (
        <div key={type}>
          <label for={`risk-${type}`}>{type}</label>
          <select
            id={`risk-${type}`}
            value={actions[type]}
            onChange={(event) => setActions({ ...actions, [type]: (event.target as HTMLSelectElement).value as RiskAction })}
          >
            {ACTIONS.map((action) => (
              <option key={action} value={action}>
                {action}
              </option>
            ))}
          </select>
        </div>
      ))}
      <label for="max-auto-approved">
        Largest commission approved without review, in the program’s reporting currency; other currencies are not compared (empty: no limit)
      </label>
      <input
        id="max-auto-approved"
        type="number"
        min={0}
        step="0.01"
        value={limit}
        onInput={(event) => setLimit((event.target as HTMLInputElement).value)}
      />
      <label for="min-click-to-conversion">Fewest seconds from click to conversion (empty: not looked for)</label>
      <input
        id="min-click-to-conversion"
        type="number"
        min={0}
        value={minimum}
        onInput={(event) => setMinimum((event.target as HTMLInputElement).value)}
      />
      <button type="submit">Save risk settings</button>
      {saved ? <Notice>Saved.</Notice> : null}
      <ErrorBanner error={error} />
    </form>
  );
}
