import { useState } from 'preact/hooks';
import { ok, type PageProps, type Schemas } from '../client';
import { described, Field, SelectField } from '../fields';
import { FieldError, FormError } from '../forms';
import { money } from '../money-and-files';
import { paged } from '../paging';
import { useProgramSettings } from '../program-settings';
import { Action, ErrorBanner, Notice, Pager, Table, useLoad, when } from '../ui';

type CommissionListItem = Schemas['CommissionListItem'];
type Program = Schemas['Program'];
type RiskAction = Schemas['RiskAction'];
type RiskSignalType = Schemas['RiskSignalType'];

const ACTIONS: RiskAction[] = ['OFF', 'FLAG', 'HOLD', 'VOID'];
/** A program that never set its risk settings has FLAG everywhere (the contracts' RISK_DEFAULTS; not imported, to keep node code out of the bundle). */
const FLAG_EVERYWHERE: Schemas['RiskActions'] = {
  SELF_REFERRAL: 'FLAG',
  CUSTOMER_OF_ANOTHER_AFFILIATE: 'FLAG',
  FAST_CONVERSION: 'FLAG',
  DISPOSABLE_EMAIL: 'FLAG',
  COOKIE_STUFFING: 'FLAG',
  OVER_AUTO_APPROVAL_LIMIT: 'FLAG',
};

/**
 * The review queue: the program's HELD commissions with the signals that held them, released or
 * voided with a note (each decision records who made it, and the note), and the risk settings that
 * decide what a signal does.
 */
export function Review({ client, can }: PageProps) {
  const [cursor, setCursor] = useState<string | null>(null);
  const [note, setNote] = useState('');
  // The last decision's refusal, beside the note when the API blames it (a void needs a reason).
  const [decisionError, setDecisionError] = useState<unknown>(null);
  const queue = useLoad(
    () =>
      paged(client.GET('/api/v1/commissions', { params: { query: { status: 'HELD', limit: 50, startingAfter: cursor ?? undefined } } })),
    [cursor],
  );
  const program = useLoad(() => ok(client.GET('/api/v1/program')), []);
  const decided = async (decision: Promise<unknown>) => {
    setDecisionError(null);
    try {
      await decision;
    } catch (failed) {
      setDecisionError(failed);
      throw failed;
    }
    queue.reload();
  };
  const written = note.trim();
  const release = (commission: CommissionListItem) => () =>
    decided(
      ok(
        client.POST('/api/v1/commissions/release', {
          body: { saleId: commission.saleId, commissionId: commission.id, ...(written ? { note: written } : {}) },
        }),
      ),
    );
  const voidIt = (commission: CommissionListItem) => () =>
    decided(
      ok(client.POST('/api/v1/commissions/void', { body: { saleId: commission.saleId, commissionId: commission.id, reason: written } })),
    );
  // One input for a release's note and a void's reason: the API names the one it refused.
  const noteDescribed = { ...described(decisionError, 'reason', 'review-reason'), ...described(decisionError, 'note', 'review-note') };
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
        {...noteDescribed}
        onInput={(event) => setNote((event.target as HTMLInputElement).value)}
      />
      <FieldError error={decisionError} param="note" id="review-note-error" />
      <FieldError error={decisionError} param="reason" id="review-reason-error" />
      <Table
        caption="Held commissions"
        rows={queue.value?.data ?? []}
        empty="No commission is held for review."
        columns={[
          { title: 'Sale', value: (commission) => <code>{commission.saleId}</code> },
          { title: 'Affiliate', value: (commission) => <code>{commission.affiliateId}</code> },
          { title: 'Amount', value: (commission) => money(commission.amount, commission.currency) },
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
                {can('releaseCommission') ? <Action label={`Release ${commission.id.slice(0, 8)}`} run={release(commission)} /> : null}
                {can('voidCommission') ? (
                  <Action kind="danger" label={`Void ${commission.id.slice(0, 8)}`} run={voidIt(commission)} />
                ) : null}
              </>
            ),
          },
        ]}
      />
      <Pager cursor={cursor} next={queue.value?.next} onPage={setCursor} />
      {program.value ? <RiskSettings client={client} can={can} program={program.value} onSaved={program.reload} /> : null}
    </section>
  );
}

function RiskSettings({ client, can, program, onSaved }: PageProps & { program: Program; onSaved: () => void }) {
  const [actions, setActions] = useState(program.riskActions ?? FLAG_EVERYWHERE);
  const [limit, setLimit] = useState(program.maxAutoApprovedCommission == null ? '' : String(program.maxAutoApprovedCommission));
  const [minimum, setMinimum] = useState(program.minClickToConversionSeconds == null ? '' : String(program.minClickToConversionSeconds));
  const { error, saved, save } = useProgramSettings(client, onSaved, () => ({
    riskActions: actions,
    maxAutoApprovedCommission: limit === '' ? null : Number(limit),
    minClickToConversionSeconds: minimum === '' ? null : Number(minimum),
  }));
  const locked = !can('updateOwnProgram');
  return (
    <form class="panel" onSubmit={save}>
      <h2>Risk settings</h2>
      <p>What each signal does: OFF (not looked for), FLAG (recorded only), HOLD (held for review here), VOID (voided at once).</p>
      {(Object.keys(actions) as RiskSignalType[]).map((type) => (
        <SelectField
          key={type}
          id={`risk-${type}`}
          label={type}
          param={`riskActions.${type}`}
          error={error}
          value={actions[type]}
          disabled={locked}
          onValue={(action) => setActions({ ...actions, [type]: action })}
          options={ACTIONS.map((action) => ({ value: action, label: action }))}
        />
      ))}
      <Field
        id="max-auto-approved"
        label="Largest commission approved without review, in the program’s reporting currency; other currencies are not compared (empty: no limit)"
        param="maxAutoApprovedCommission"
        error={error}
        type="number"
        min={0}
        step="0.01"
        value={limit}
        disabled={locked}
        onValue={setLimit}
      />
      <Field
        id="min-click-to-conversion"
        label="Fewest seconds from click to conversion (empty: not looked for)"
        param="minClickToConversionSeconds"
        error={error}
        type="number"
        min={0}
        value={minimum}
        disabled={locked}
        onValue={setMinimum}
      />
      {locked ? null : <button type="submit">Save risk settings</button>}
      {saved ? <Notice>Saved.</Notice> : null}
      <FormError
        error={error}
        params={['maxAutoApprovedCommission', 'minClickToConversionSeconds', ...Object.keys(actions).map((type) => `riskActions.${type}`)]}
      />
    </form>
  );
}
