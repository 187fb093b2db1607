import { useState } from 'preact/hooks';
import { ok, type PageProps, type Schemas } from '../client';
import { CheckboxField, ConfirmedAction, Field, SelectField } from '../fields';
import { FieldError, FormError } from '../forms';
import { everyPage } from '../paging';
import { Action, ErrorBanner, Notice, Table, useLoad, useSubmit } from '../ui';
import { numberOrNull, optionalNumber, requiredNumber, shownNumber } from '../values';

type Plan = Schemas['CommissionPlan'];
type Tier = Schemas['CommissionTierRule'];

const COMMISSION_TYPES: { value: Plan['commissionType']; label: string }[] = [
  { value: 'PERCENTAGE', label: "PERCENTAGE: a percentage of the sale's total" },
  { value: 'FLAT', label: 'FLAT: an amount per sale' },
];
const RECURRING: { value: Plan['recurring']; label: string }[] = [
  { value: 'ONCE', label: 'ONCE: only the first payment earns' },
  { value: 'FOREVER', label: 'FOREVER: every recurring payment earns' },
  { value: 'LIMITED', label: 'LIMITED: recurring payments earn for some months' },
];
const METRICS: { value: Tier['metric']; label: string }[] = [
  { value: 'SALES_COUNT', label: "SALES_COUNT: the affiliate's sales" },
  { value: 'REVENUE', label: "REVENUE: the affiliate's revenue" },
];
const PLAN_FIELDS = [
  'name',
  'commissionType',
  'rate',
  'currency',
  'firstPaymentRate',
  'recurring',
  'recurringMonths',
  'holdDays',
  'minimumPayout',
  'tiers',
  'isDefault',
];

const rateOf = (plan: Plan) => (plan.commissionType === 'PERCENTAGE' ? `${plan.rate}%` : `${plan.rate} ${plan.currency ?? ''}`);

/** Commission plans: created, edited, made the program's default, deleted (or the API's refusal, in its words). */
export function Plans({ client, can }: PageProps) {
  const plans = useLoad(
    () => everyPage((startingAfter) => client.GET('/api/v1/commission-plans', { params: { query: { limit: 1000, startingAfter } } })),
    [],
  );
  const [editing, setEditing] = useState<string | null>(null);
  const current = plans.value?.find((plan) => plan.id === editing) ?? null;
  return (
    <section>
      <h1>Commission plans</h1>
      <ErrorBanner error={plans.error} />
      <Table
        caption="Commission plans"
        rows={plans.value ?? []}
        empty="No plan yet: affiliates earn their own commission rate."
        columns={[
          { title: 'Name', value: (plan) => plan.name },
          { title: 'Rate', value: rateOf },
          { title: 'First payment', value: (plan) => (plan.firstPaymentRate === null ? '—' : String(plan.firstPaymentRate)) },
          {
            title: 'Recurring',
            value: (plan) => (plan.recurring === 'LIMITED' ? `LIMITED, ${plan.recurringMonths} months` : plan.recurring),
          },
          { title: 'Hold', value: (plan) => `${plan.holdDays} days` },
          { title: 'Minimum payout', value: (plan) => plan.minimumPayout ?? '—' },
          { title: 'Tiers', value: (plan) => plan.tiers.map((tier) => `${tier.threshold} → ${tier.rate}`).join('; ') || '—' },
          { title: 'Default', value: (plan) => (plan.isDefault ? 'Default' : '') },
          {
            title: 'Actions',
            value: (plan) => (
              <>
                {can('updateCommissionPlan') ? (
                  <button type="button" onClick={() => setEditing(plan.id)} aria-label={`Edit ${plan.name}`}>
                    Edit
                  </button>
                ) : null}
                {can('updateCommissionPlan') && !plan.isDefault ? (
                  <Action
                    label={`Make ${plan.name} the default`}
                    run={async () => {
                      await ok(client.PUT('/api/v1/commission-plans', { body: { commissionPlanId: plan.id, isDefault: true } }));
                      plans.reload();
                    }}
                  />
                ) : null}
                {can('deleteCommissionPlan') ? (
                  <ConfirmedAction
                    label={`Delete ${plan.name}`}
                    confirm={`Confirm: delete ${plan.name}`}
                    run={async () => {
                      await ok(client.DELETE('/api/v1/commission-plans', { body: { commissionPlanId: plan.id } }));
                      if (editing === plan.id) setEditing(null);
                      plans.reload();
                    }}
                  />
                ) : null}
              </>
            ),
          },
        ]}
      />
      {current ? <PlanForm key={current.id} client={client} plan={current} onSaved={plans.reload} /> : null}
      {can('createCommissionPlan') ? <PlanForm key="new" client={client} plan={null} onSaved={plans.reload} /> : null}
    </section>
  );
}

type EditedTier = { threshold: string; rate: string };

/** One form for a new plan (POST) and for a plan's change (PUT, where a blank optional field clears it). */
function PlanForm({ client, plan, onSaved }: { client: PageProps['client']; plan: Plan | null; onSaved: () => void }) {
  const prefix = plan ? 'edit-plan' : 'new-plan';
  const [name, setName] = useState(plan?.name ?? '');
  const [commissionType, setCommissionType] = useState<Plan['commissionType']>(plan?.commissionType ?? 'PERCENTAGE');
  const [rate, setRate] = useState(shownNumber(plan?.rate));
  const [currency, setCurrency] = useState(plan?.currency ?? '');
  const [firstPaymentRate, setFirstPaymentRate] = useState(shownNumber(plan?.firstPaymentRate));
  const [recurring, setRecurring] = useState<Plan['recurring']>(plan?.recurring ?? 'FOREVER');
  const [recurringMonths, setRecurringMonths] = useState(shownNumber(plan?.recurringMonths));
  const [holdDays, setHoldDays] = useState(shownNumber(plan?.holdDays));
  const [minimumPayout, setMinimumPayout] = useState(shownNumber(plan?.minimumPayout));
  const [isDefault, setIsDefault] = useState(false);
  const [metric, setMetric] = useState<Tier['metric']>(plan?.tiers[0]?.metric ?? 'SALES_COUNT');
  const [tiers, setTiers] = useState<EditedTier[]>(
    (plan?.tiers ?? []).map((tier) => ({ threshold: String(tier.threshold), rate: String(tier.rate) })),
  );
  const tierRules = () => tiers.map((tier) => ({ metric, threshold: requiredNumber(tier.threshold), rate: requiredNumber(tier.rate) }));
  const { error, done, submit } = useSubmit(async () => {
    const flat = commissionType === 'FLAT';
    const limited = recurring === 'LIMITED';
    if (plan) {
      await ok(
        client.PUT('/api/v1/commission-plans', {
          body: {
            commissionPlanId: plan.id,
            name,
            commissionType,
            rate: requiredNumber(rate),
            currency: flat ? currency || null : null,
            firstPaymentRate: numberOrNull(firstPaymentRate),
            recurring,
            recurringMonths: limited ? numberOrNull(recurringMonths) : null,
            holdDays: requiredNumber(holdDays),
            minimumPayout: numberOrNull(minimumPayout),
            tiers: tierRules(),
          },
        }),
      );
    } else {
      await ok(
        client.POST('/api/v1/commission-plans', {
          body: {
            name,
            commissionType,
            rate: requiredNumber(rate),
            ...(flat && currency ? { currency } : {}),
            ...(firstPaymentRate.trim() ? { firstPaymentRate: requiredNumber(firstPaymentRate) } : {}),
            recurring,
            ...(limited ? { recurringMonths: optionalNumber(recurringMonths) } : {}),
            // Left empty, the hold is the API's default (the document's), never a copy of it here.
            ...(holdDays.trim() ? { holdDays: requiredNumber(holdDays) } : {}),
            ...(minimumPayout.trim() ? { minimumPayout: requiredNumber(minimumPayout) } : {}),
            tiers: tierRules(),
            isDefault,
          },
        }),
      );
      // A new form for the next plan: the one just created is in the table.
      for (const clear of [setName, setRate, setCurrency, setFirstPaymentRate, setRecurringMonths, setMinimumPayout]) clear('');
      setCommissionType('PERCENTAGE');
      setRecurring('FOREVER');
      setHoldDays('');
      setIsDefault(false);
      setTiers([]);
    }
    onSaved();
  });
  const editTier = (index: number, change: Partial<EditedTier>) =>
    setTiers(tiers.map((tier, at) => (at === index ? { ...tier, ...change } : tier)));
  return (
    <form class="panel" onSubmit={submit} noValidate aria-labelledby={`${prefix}-title`}>
      <h2 id={`${prefix}-title`}>{plan ? `Edit ${plan.name}` : 'New commission plan'}</h2>
      <Field id={`${prefix}-name`} label="Plan name" param="name" error={error} value={name} onValue={setName} />
      <SelectField
        id={`${prefix}-type`}
        label="Commission type"
        param="commissionType"
        error={error}
        value={commissionType}
        onValue={setCommissionType}
        options={COMMISSION_TYPES}
      />
      <Field
        id={`${prefix}-rate`}
        label={commissionType === 'PERCENTAGE' ? 'Rate (% of the sale)' : 'Rate (amount per sale)'}
        param="rate"
        error={error}
        inputMode="decimal"
        value={rate}
        onValue={setRate}
      />
      {commissionType === 'FLAT' ? (
        <Field
          id={`${prefix}-currency`}
          label="Currency of the rate (ISO 4217, e.g. USD)"
          param="currency"
          error={error}
          value={currency}
          onValue={setCurrency}
        />
      ) : (
        <FieldError error={error} param="currency" id={`${prefix}-currency-error`} />
      )}
      <Field
        id={`${prefix}-first-payment-rate`}
        label="Rate of the first payment (optional)"
        param="firstPaymentRate"
        error={error}
        inputMode="decimal"
        value={firstPaymentRate}
        onValue={setFirstPaymentRate}
      />
      <SelectField
        id={`${prefix}-recurring`}
        label="Recurring payments"
        param="recurring"
        error={error}
        value={recurring}
        onValue={setRecurring}
        options={RECURRING}
      />
      {recurring === 'LIMITED' ? (
        <Field
          id={`${prefix}-recurring-months`}
          label="Months recurring payments earn"
          param="recurringMonths"
          error={error}
          inputMode="numeric"
          value={recurringMonths}
          onValue={setRecurringMonths}
        />
      ) : null}
      <Field
        id={`${prefix}-hold-days`}
        label={
          plan ? 'Days a commission is held before it is due' : "Days a commission is held before it is due (empty: the API's default)"
        }
        param="holdDays"
        error={error}
        inputMode="numeric"
        value={holdDays}
        onValue={setHoldDays}
      />
      <Field
        id={`${prefix}-minimum-payout`}
        label="Minimum payout (optional)"
        param="minimumPayout"
        error={error}
        inputMode="decimal"
        value={minimumPayout}
        onValue={setMinimumPayout}
      />
      <fieldset>
        <legend>Tiers: a higher rate from a threshold on</legend>
        {tiers.length ? (
          <SelectField
            id={`${prefix}-tier-metric`}
            label="Tiers count"
            param="tiers"
            error={null}
            value={metric}
            onValue={setMetric}
            options={METRICS}
          />
        ) : null}
        {tiers.map((tier, index) => (
          <div class="question" key={index}>
            <Field
              id={`${prefix}-tier-${index}-threshold`}
              label={`Tier ${index + 1} threshold`}
              param={`tiers.${index}.threshold`}
              error={error}
              inputMode="decimal"
              value={tier.threshold}
              onValue={(threshold) => editTier(index, { threshold })}
            />
            <Field
              id={`${prefix}-tier-${index}-rate`}
              label={`Tier ${index + 1} rate`}
              param={`tiers.${index}.rate`}
              error={error}
              inputMode="decimal"
              value={tier.rate}
              onValue={(tierRate) => editTier(index, { rate: tierRate })}
            />
            <button type="button" class="danger" onClick={() => setTiers(tiers.filter((_, at) => at !== index))}>
              Remove tier {index + 1}
            </button>
          </div>
        ))}
        <button type="button" onClick={() => setTiers([...tiers, { threshold: '', rate: '' }])}>
          Add a tier
        </button>
        <FieldError error={error} param="tiers" id={`${prefix}-tiers-error`} />
      </fieldset>
      {plan ? null : (
        <CheckboxField
          id={`${prefix}-default`}
          label="The program's default plan (for every affiliate without one of its own)"
          param="isDefault"
          error={error}
          checked={isDefault}
          onChecked={setIsDefault}
        />
      )}
      <button type="submit">{plan ? 'Save plan' : 'Create plan'}</button>
      {done ? <Notice>{plan ? 'Saved.' : 'Plan created.'}</Notice> : null}
      <FormError
        error={error}
        params={[...PLAN_FIELDS, ...tiers.flatMap((_, index) => [`tiers.${index}.threshold`, `tiers.${index}.rate`])]}
      />
    </form>
  );
}
