import { useState } from 'preact/hooks';
import { ok, type PageProps, type Schemas } from '../client';
import { CheckboxField, ConfirmedAction, Field, SelectField, fieldsOf } from '../fields';
import { FieldError, FormError, fieldMessage } from '../forms';
import { everyPage } from '../paging';
import { Action, ErrorBanner, Notice, Table, useLoad, useSubmit, when } from '../ui';
import { instantOrNull, localOf, numberOrNull, optionalNumber, shownNumber } from '../values';

type Coupon = Schemas['Coupon'];
type Code = Schemas['PromotionalCodeSummary'];
type Affiliate = Schemas['Affiliate'];
type Client = PageProps['client'];

const COUPON_TYPES: { value: Coupon['couponType']; label: string }[] = [
  { value: 'PERCENTAGE', label: 'PERCENTAGE: a percentage off' },
  { value: 'FLAT', label: 'FLAT: an amount off' },
];
const DURATIONS: { value: Coupon['duration']; label: string }[] = [
  { value: 'forever', label: 'forever' },
  { value: 'once', label: 'once: the first payment' },
  { value: 'repeating', label: 'repeating: for some months' },
];
/** The parts of a generated code, in the order the API joins them. */
const CODE_PARTS: { part: keyof Schemas['CodeStructure']; label: string }[] = [
  { part: 'firstName', label: "The affiliate's first name" },
  { part: 'lastName', label: "The affiliate's last name" },
  { part: 'emailLocalPart', label: "The affiliate's email before the @" },
  { part: 'discountAmount', label: "The coupon's discount" },
  { part: 'couponName', label: "The coupon's name" },
  { part: 'randomChars', label: 'Random characters' },
];

const discountOf = (coupon: Coupon) =>
  coupon.couponType === 'PERCENTAGE' ? `${coupon.percentOff}% off` : `${coupon.amountOff} ${coupon.currency ?? ''} off`;
const affiliateName = (affiliate: Pick<Affiliate, 'firstName' | 'lastName' | 'email'>) =>
  `${affiliate.firstName} ${affiliate.lastName} (${affiliate.email})`;

/**
 * Coupons and their promotional codes: a coupon created, edited, deactivated (valid false) or deleted;
 * its codes added, retired (active false) or deleted, and generated in bulk for a group of affiliates.
 */
export function Coupons({ client, can }: PageProps) {
  const coupons = useLoad(
    () => everyPage((startingAfter) => client.GET('/api/v1/coupons', { params: { query: { limit: 1000, startingAfter } } })),
    [],
  );
  const affiliates = useLoad(
    async () =>
      can('getAffiliates')
        ? everyPage((startingAfter) =>
            client.GET('/api/v1/affiliates', { params: { query: { status: 'ACTIVE', limit: 1000, startingAfter } } }),
          )
        : [],
    [],
  );
  const [selected, setSelected] = useState<string | null>(null);
  const current = coupons.value?.find((coupon) => coupon.id === selected) ?? null;
  return (
    <section>
      <h1>Coupons and promotional codes</h1>
      <ErrorBanner error={coupons.error ?? affiliates.error} />
      <Table
        caption="Coupons, newest first"
        rows={coupons.value ?? []}
        empty="No coupon yet."
        columns={[
          { title: 'Name', value: (coupon) => coupon.name ?? '—' },
          { title: 'Discount', value: discountOf },
          {
            title: 'Duration',
            value: (coupon) => (coupon.duration === 'repeating' ? `repeating, ${coupon.durationInMonths} months` : coupon.duration),
          },
          { title: 'Redeemed', value: (coupon) => `${coupon.timesRedeemed} of ${coupon.maxRedemptions ?? 'unlimited'}` },
          { title: 'Redeem by', value: (coupon) => when(coupon.redeemBy) },
          { title: 'State', value: (coupon) => (coupon.valid ? 'valid' : 'deactivated') },
          { title: 'Codes', value: (coupon) => coupon.promotionalCodes.map((code) => code.code).join(', ') || '—' },
          {
            title: '',
            value: (coupon) => (
              <button type="button" onClick={() => setSelected(coupon.id)} aria-label={`Manage ${coupon.name ?? coupon.id}`}>
                Manage
              </button>
            ),
          },
        ]}
      />
      {can('createCoupon') ? (
        <CreateCoupon
          client={client}
          onCreated={(coupon) => {
            setSelected(coupon.id);
            coupons.reload();
          }}
        />
      ) : null}
      {current ? (
        <CouponPanel
          key={current.id}
          client={client}
          can={can}
          coupon={current}
          affiliates={affiliates.value ?? []}
          onChanged={coupons.reload}
          onDeleted={() => {
            setSelected(null);
            coupons.reload();
          }}
        />
      ) : null}
    </section>
  );
}

const COUPON_FIELDS = [
  'name',
  'couponType',
  'percentOff',
  'amountOff',
  'currency',
  'duration',
  'durationInMonths',
  'maxRedemptions',
  'redeemBy',
];

function CreateCoupon({ client, onCreated }: { client: Client; onCreated: (coupon: Coupon) => void }) {
  const [name, setName] = useState('');
  const [couponType, setCouponType] = useState<Coupon['couponType']>('PERCENTAGE');
  const [percentOff, setPercentOff] = useState('');
  const [amountOff, setAmountOff] = useState('');
  const [currency, setCurrency] = useState('');
  const [duration, setDuration] = useState<Coupon['duration']>('forever');
  const [durationInMonths, setDurationInMonths] = useState('');
  const [maxRedemptions, setMaxRedemptions] = useState('');
  const [redeemBy, setRedeemBy] = useState('');
  const { error, done, submit } = useSubmit(async () => {
    const percentage = couponType === 'PERCENTAGE';
    const created = await ok(
      client.POST('/api/v1/coupons', {
        body: {
          name,
          couponType,
          ...(percentage
            ? { percentOff: optionalNumber(percentOff) }
            : { amountOff: optionalNumber(amountOff), ...(currency ? { currency } : {}) }),
          duration,
          ...(duration === 'repeating' ? { durationInMonths: optionalNumber(durationInMonths) } : {}),
          ...(maxRedemptions.trim() ? { maxRedemptions: optionalNumber(maxRedemptions) } : {}),
          ...(redeemBy ? { redeemBy: instantOrNull(redeemBy) } : {}),
        },
      }),
    );
    for (const clear of [setName, setPercentOff, setAmountOff, setCurrency, setDurationInMonths, setMaxRedemptions, setRedeemBy]) clear('');
    onCreated(created);
  });
  return (
    <form class="panel" onSubmit={submit} noValidate aria-labelledby="new-coupon-title">
      <h2 id="new-coupon-title">New coupon</h2>
      <Field id="coupon-name" label="Coupon name" param="name" error={error} value={name} onValue={setName} />
      <SelectField
        id="coupon-type"
        label="Discount type"
        param="couponType"
        error={error}
        value={couponType}
        onValue={setCouponType}
        options={COUPON_TYPES}
      />
      {couponType === 'PERCENTAGE' ? (
        <Field
          id="coupon-percent-off"
          label="Percent off (1 to 100)"
          param="percentOff"
          error={error}
          inputMode="decimal"
          value={percentOff}
          onValue={setPercentOff}
        />
      ) : (
        <>
          <Field
            id="coupon-amount-off"
            label="Amount off"
            param="amountOff"
            error={error}
            inputMode="decimal"
            value={amountOff}
            onValue={setAmountOff}
          />
          <Field
            id="coupon-currency"
            label="Currency of the amount (ISO 4217, e.g. USD)"
            param="currency"
            error={error}
            value={currency}
            onValue={setCurrency}
          />
        </>
      )}
      <SelectField
        id="coupon-duration"
        label="Duration"
        param="duration"
        error={error}
        value={duration}
        onValue={setDuration}
        options={DURATIONS}
      />
      {duration === 'repeating' ? (
        <Field
          id="coupon-duration-months"
          label="Months the discount lasts"
          param="durationInMonths"
          error={error}
          inputMode="numeric"
          value={durationInMonths}
          onValue={setDurationInMonths}
        />
      ) : null}
      <CouponLimits
        prefix="coupon"
        error={error}
        maxRedemptions={maxRedemptions}
        onMaxRedemptions={setMaxRedemptions}
        redeemBy={redeemBy}
        onRedeemBy={setRedeemBy}
      />
      <button type="submit">Create coupon</button>
      {done ? <Notice>Coupon created: add its codes below.</Notice> : null}
      <FormError error={error} params={COUPON_FIELDS} />
    </form>
  );
}

/** What a coupon is created with and changed by alike: its redemptions across its codes, and its last moment. */
function CouponLimits({
  prefix,
  error,
  maxRedemptions,
  onMaxRedemptions,
  redeemBy,
  onRedeemBy,
}: {
  prefix: string;
  error: unknown;
  maxRedemptions: string;
  onMaxRedemptions: (value: string) => void;
  redeemBy: string;
  onRedeemBy: (value: string) => void;
}) {
  return (
    <>
      <Field
        id={`${prefix}-max-redemptions`}
        label="Redemptions allowed across its codes (blank: unlimited)"
        param="maxRedemptions"
        error={error}
        inputMode="numeric"
        value={maxRedemptions}
        onValue={onMaxRedemptions}
      />
      <Field
        id={`${prefix}-redeem-by`}
        label="Redeemable until (UTC; blank: no end)"
        param="redeemBy"
        error={error}
        type="datetime-local"
        value={redeemBy}
        onValue={onRedeemBy}
      />
    </>
  );
}

function CouponPanel({
  client,
  can,
  coupon,
  affiliates,
  onChanged,
  onDeleted,
}: PageProps & { coupon: Coupon; affiliates: Affiliate[]; onChanged: () => void; onDeleted: () => void }) {
  const title = coupon.name ?? coupon.id;
  return (
    <section class="panel" aria-labelledby="coupon-title">
      <h2 id="coupon-title">Coupon {title}</h2>
      <p>
        {discountOf(coupon)}, {coupon.duration}.{' '}
        {coupon.valid ? 'Valid: its codes can be redeemed.' : 'Deactivated: none of its codes can be redeemed.'}
      </p>
      <div class="actions">
        {can('updateCoupon') ? (
          <Action
            label={coupon.valid ? 'Deactivate coupon' : 'Reactivate coupon'}
            kind={coupon.valid ? 'danger' : undefined}
            run={async () => {
              await ok(client.PUT('/api/v1/coupons', { body: { couponId: coupon.id, valid: !coupon.valid } }));
              onChanged();
            }}
          />
        ) : null}
        {can('deleteCoupon') ? (
          <ConfirmedAction
            label="Delete coupon"
            confirm={`Confirm: delete ${title} and all its codes`}
            run={async () => {
              await ok(client.DELETE('/api/v1/coupons', { body: { couponId: coupon.id } }));
              onDeleted();
            }}
          />
        ) : null}
      </div>
      {can('updateCoupon') ? <EditCoupon client={client} coupon={coupon} onSaved={onChanged} /> : null}
      <Codes client={client} can={can} coupon={coupon} affiliates={affiliates} onChanged={onChanged} />
      {can('createPromotionalCode') ? <CreateCode client={client} coupon={coupon} affiliates={affiliates} onCreated={onChanged} /> : null}
      {can('issuePromotionalCodesInBulk') ? (
        <BulkCodes client={client} coupon={coupon} affiliates={affiliates} onIssued={onChanged} />
      ) : null}
    </section>
  );
}

/** The coupon's changeable fields (the discount itself is immutable, as in Stripe: UpdateCouponBody). */
function EditCoupon({ client, coupon, onSaved }: { client: Client; coupon: Coupon; onSaved: () => void }) {
  const [name, setName] = useState(coupon.name ?? '');
  const [maxRedemptions, setMaxRedemptions] = useState(coupon.maxRedemptions === null ? '' : String(coupon.maxRedemptions));
  const [redeemBy, setRedeemBy] = useState(localOf(coupon.redeemBy));
  const { error, done, submit } = useSubmit(async () => {
    await ok(
      client.PUT('/api/v1/coupons', {
        body: { couponId: coupon.id, name, maxRedemptions: numberOrNull(maxRedemptions), redeemBy: instantOrNull(redeemBy) },
      }),
    );
    onSaved();
  });
  return (
    <form class="panel" onSubmit={submit} noValidate aria-labelledby="edit-coupon-title">
      <h3 id="edit-coupon-title">Edit the coupon</h3>
      <Field id="edit-coupon-name" label="Coupon name" param="name" error={error} value={name} onValue={setName} />
      <CouponLimits
        prefix="edit-coupon"
        error={error}
        maxRedemptions={maxRedemptions}
        onMaxRedemptions={setMaxRedemptions}
        redeemBy={redeemBy}
        onRedeemBy={setRedeemBy}
      />
      <button type="submit">Save coupon</button>
      {done ? <Notice>Saved.</Notice> : null}
      <FormError error={error} params={['name', 'maxRedemptions', 'redeemBy']} />
    </form>
  );
}

function Codes({
  client,
  can,
  coupon,
  affiliates,
  onChanged,
}: PageProps & { coupon: Coupon; affiliates: Affiliate[]; onChanged: () => void }) {
  const [editing, setEditing] = useState<string | null>(null);
  const edited = coupon.promotionalCodes.find((code) => code.id === editing) ?? null;
  const setActive = async (code: Code, active: boolean) => {
    await ok(client.PUT('/api/v1/promotional-codes', { body: { promotionalCodeId: code.id, active } }));
    onChanged();
  };
  return (
    <>
      <Table
        caption={`Promotional codes of ${coupon.name ?? coupon.id}`}
        rows={coupon.promotionalCodes}
        empty="No code yet."
        columns={[
          { title: 'Code', value: (code) => <code>{code.code}</code> },
          { title: 'Affiliate', value: (code) => (code.affiliate ? affiliateName(code.affiliate) : 'none: attributes no sale') },
          { title: 'State', value: (code) => (code.active ? 'active' : 'retired') },
          { title: 'Redeemed', value: (code) => `${code.timesRedeemed} of ${code.maxRedemptions ?? 'unlimited'}` },
          { title: 'Expires', value: (code) => when(code.expiresAt) },
          {
            title: 'Actions',
            value: (code) => (
              <>
                {can('updatePromotionalCode') ? (
                  <>
                    <button type="button" onClick={() => setEditing(code.id)}>
                      Edit {code.code}
                    </button>
                    <Action
                      label={code.active ? `Deactivate ${code.code}` : `Reactivate ${code.code}`}
                      run={() => setActive(code, !code.active)}
                    />
                  </>
                ) : null}
                {can('deletePromotionalCode') ? (
                  <ConfirmedAction
                    label={`Delete ${code.code}`}
                    confirm={`Confirm: delete ${code.code}`}
                    run={async () => {
                      await ok(client.DELETE('/api/v1/promotional-codes', { body: { promotionalCodeId: code.id } }));
                      onChanged();
                    }}
                  />
                ) : null}
              </>
            ),
          },
        ]}
      />
      {edited ? <EditCode key={edited.id} client={client} code={edited} affiliates={affiliates} onSaved={onChanged} /> : null}
    </>
  );
}

const EDIT_CODE_FIELDS = [
  'expiresAt',
  'maxRedemptions',
  'affiliateId',
  'limitToAffiliate',
  'firstTimeOrder',
  'minimumAmount',
  'minimumAmountCurrency',
  'customerId',
  'limitToCustomers',
];

/**
 * PUT /promotional-codes: what UpdatePromotionalCodeBody lets a code change besides its state (when it
 * expires, how often it may be redeemed, its affiliate, the minimum order and the customer it is kept
 * for); a blank field clears its setting (null), and the API's messages show beside the fields.
 */
function EditCode({ client, code, affiliates, onSaved }: { client: Client; code: Code; affiliates: Affiliate[]; onSaved: () => void }) {
  const [expiresAt, setExpiresAt] = useState(localOf(code.expiresAt));
  const [maxRedemptions, setMaxRedemptions] = useState(shownNumber(code.maxRedemptions));
  const [affiliateId, setAffiliateId] = useState(code.affiliateId ?? '');
  const [limitToAffiliate, setLimitToAffiliate] = useState(code.limitToAffiliate);
  const [firstTimeOrder, setFirstTimeOrder] = useState(code.firstTimeOrder);
  const [minimumAmount, setMinimumAmount] = useState(shownNumber(code.minimumAmount));
  const [minimumAmountCurrency, setMinimumAmountCurrency] = useState(code.minimumAmountCurrency ?? '');
  const [customerId, setCustomerId] = useState(code.customerId ?? '');
  const [limitToCustomers, setLimitToCustomers] = useState(code.limitToCustomers);
  const { error, done, submit } = useSubmit(async () => {
    await ok(
      client.PUT('/api/v1/promotional-codes', {
        body: {
          promotionalCodeId: code.id,
          expiresAt: instantOrNull(expiresAt),
          maxRedemptions: numberOrNull(maxRedemptions),
          affiliateId: affiliateId || null,
          limitToAffiliate,
          firstTimeOrder,
          minimumAmount: numberOrNull(minimumAmount),
          minimumAmountCurrency: minimumAmountCurrency.trim() || null,
          customerId: customerId.trim() || null,
          limitToCustomers,
        },
      }),
    );
    onSaved();
  });
  const prefix = `edit-code-${code.id}`;
  const field = fieldsOf(error);
  return (
    <form class="panel" onSubmit={submit} noValidate aria-labelledby={`${prefix}-title`}>
      <h3 id={`${prefix}-title`}>Edit code {code.code}</h3>
      <CodeLimits
        prefix={prefix}
        error={error}
        maxRedemptions={maxRedemptions}
        onMaxRedemptions={setMaxRedemptions}
        expiresAt={expiresAt}
        onExpiresAt={setExpiresAt}
      />
      <AffiliateSelect id={`${prefix}-affiliate`} affiliates={affiliates} value={affiliateId} onValue={setAffiliateId} error={error} />
      <CheckboxField
        id={`${prefix}-limit-to-affiliate`}
        label="Only that affiliate may redeem it"
        param="limitToAffiliate"
        error={error}
        checked={limitToAffiliate}
        onChecked={setLimitToAffiliate}
      />
      <CheckboxField
        id={`${prefix}-first-time-order`}
        label="Only on a customer's first order"
        param="firstTimeOrder"
        error={error}
        checked={firstTimeOrder}
        onChecked={setFirstTimeOrder}
      />
      <Field
        id={`${prefix}-minimum-amount`}
        label="Minimum order amount (blank: none)"
        inputMode="decimal"
        {...field('minimumAmount', minimumAmount, setMinimumAmount)}
      />
      <Field
        id={`${prefix}-minimum-currency`}
        label="Currency of the minimum (e.g. USD)"
        {...field('minimumAmountCurrency', minimumAmountCurrency, setMinimumAmountCurrency)}
      />
      <Field
        id={`${prefix}-customer`}
        label="Customer id it is kept for (blank: none)"
        {...field('customerId', customerId, setCustomerId)}
      />
      <CheckboxField
        id={`${prefix}-limit-to-customers`}
        label="Only that customer may redeem it"
        param="limitToCustomers"
        error={error}
        checked={limitToCustomers}
        onChecked={setLimitToCustomers}
      />
      <button type="submit">Save code</button>
      {done ? <Notice>Code saved.</Notice> : null}
      <FormError error={error} params={EDIT_CODE_FIELDS} />
    </form>
  );
}

/** A code's limits, in the forms that add and edit one: how often it may be redeemed and when it expires. */
function CodeLimits({
  prefix,
  error,
  maxRedemptions,
  onMaxRedemptions,
  expiresAt,
  onExpiresAt,
}: {
  prefix: string;
  error: unknown;
  maxRedemptions: string;
  onMaxRedemptions: (value: string) => void;
  expiresAt: string;
  onExpiresAt: (value: string) => void;
}) {
  const field = fieldsOf(error);
  return (
    <>
      <Field
        id={`${prefix}-max-redemptions`}
        label="Redemptions allowed for this code (blank: unlimited)"
        inputMode="numeric"
        {...field('maxRedemptions', maxRedemptions, onMaxRedemptions)}
      />
      <Field
        id={`${prefix}-expires-at`}
        label="Expires (UTC; blank: never)"
        type="datetime-local"
        {...field('expiresAt', expiresAt, onExpiresAt)}
      />
    </>
  );
}

function AffiliateSelect({
  id,
  affiliates,
  value,
  onValue,
  error,
}: {
  id: string;
  affiliates: Affiliate[];
  value: string;
  onValue: (value: string) => void;
  error: unknown;
}) {
  return (
    <SelectField
      id={id}
      label="Affiliate its sales are attributed to"
      param="affiliateId"
      error={error}
      value={value}
      onValue={onValue}
      options={[{ value: '', label: 'None' }, ...affiliates.map((affiliate) => ({ value: affiliate.id, label: affiliateName(affiliate) }))]}
    />
  );
}

const CODE_FIELDS = ['code', 'affiliateId', 'maxRedemptions', 'expiresAt'];

function CreateCode({
  client,
  coupon,
  affiliates,
  onCreated,
}: {
  client: Client;
  coupon: Coupon;
  affiliates: Affiliate[];
  onCreated: () => void;
}) {
  const [code, setCode] = useState('');
  const [affiliateId, setAffiliateId] = useState('');
  const [maxRedemptions, setMaxRedemptions] = useState('');
  const [expiresAt, setExpiresAt] = useState('');
  const { error, done, submit } = useSubmit(async () => {
    await ok(
      client.POST('/api/v1/promotional-codes', {
        body: {
          couponId: coupon.id,
          code,
          ...(affiliateId ? { affiliateId } : {}),
          ...(maxRedemptions.trim() ? { maxRedemptions: optionalNumber(maxRedemptions) } : {}),
          ...(expiresAt ? { expiresAt: instantOrNull(expiresAt) } : {}),
        },
      }),
    );
    setCode('');
    onCreated();
  });
  return (
    <form class="panel" onSubmit={submit} noValidate aria-labelledby="new-code-title">
      <h3 id="new-code-title">New promotional code</h3>
      <Field
        id="code-code"
        label="Code (letters, numbers, hyphens and underscores)"
        param="code"
        error={error}
        value={code}
        onValue={setCode}
      />
      <AffiliateSelect id="code-affiliate" affiliates={affiliates} value={affiliateId} onValue={setAffiliateId} error={error} />
      <CodeLimits
        prefix="code"
        error={error}
        maxRedemptions={maxRedemptions}
        onMaxRedemptions={setMaxRedemptions}
        expiresAt={expiresAt}
        onExpiresAt={setExpiresAt}
      />
      <button type="submit">Add code</button>
      {done ? <Notice>Code added.</Notice> : null}
      <FormError error={error} params={CODE_FIELDS} />
    </form>
  );
}

const BULK_FIELDS = ['affiliateIds', 'prefix', 'codeStructure', 'randomCharsLength'];

/**
 * POST /promotional-codes/bulk: one generated code of this coupon for each chosen affiliate (or for
 * every ACTIVE one, page after page), and what the API did for each: issued, already had one, or skipped and why.
 */
function BulkCodes({
  client,
  coupon,
  affiliates,
  onIssued,
}: {
  client: Client;
  coupon: Coupon;
  affiliates: Affiliate[];
  onIssued: () => void;
}) {
  const [chosen, setChosen] = useState<string[]>([]);
  const [allActive, setAllActive] = useState(false);
  const [prefix, setPrefix] = useState('');
  const [parts, setParts] = useState<Schemas['CodeStructure']>({ firstName: true, randomChars: true });
  const [randomCharsLength, setRandomCharsLength] = useState('');
  const [result, setResult] = useState<Schemas['BulkIssueResult'] | null>(null);
  const { error, submit } = useSubmit(async () => {
    setResult(null);
    const generation = {
      couponId: coupon.id,
      ...(prefix ? { prefix } : {}),
      codeStructure: parts,
      ...(randomCharsLength.trim() ? { randomCharsLength: optionalNumber(randomCharsLength) } : {}),
    };
    if (!allActive) {
      setResult(await ok(client.POST('/api/v1/promotional-codes/bulk', { body: { ...generation, affiliateIds: chosen } })));
    } else {
      // allActive answers one page of affiliates at a time: the form follows nextStartingAfter to the last.
      const total: Schemas['BulkIssueResult'] = { issued: [], alreadyIssued: [], skipped: [], nextStartingAfter: null };
      let startingAfter: string | null = null;
      do {
        const page: Schemas['BulkIssueResult'] = await ok(
          client.POST('/api/v1/promotional-codes/bulk', {
            body: { ...generation, allActive: true, ...(startingAfter ? { startingAfter } : {}) },
          }),
        );
        total.issued.push(...page.issued);
        total.alreadyIssued.push(...page.alreadyIssued);
        total.skipped.push(...page.skipped);
        startingAfter = page.nextStartingAfter;
      } while (startingAfter);
      setResult(total);
    }
    onIssued();
  });
  const toggle = (id: string) => setChosen(chosen.includes(id) ? chosen.filter((each) => each !== id) : [...chosen, id]);
  const nameOf = (id: string) => {
    const affiliate = affiliates.find((each) => each.id === id);
    return affiliate ? affiliateName(affiliate) : id;
  };
  return (
    <form class="panel" onSubmit={submit} noValidate aria-labelledby="bulk-title">
      <h3 id="bulk-title">Generate codes for a group of affiliates</h3>
      <CheckboxField
        id="bulk-all-active"
        label="Every active affiliate"
        param="allActive"
        error={error}
        checked={allActive}
        onChecked={setAllActive}
      />
      {allActive ? null : (
        <fieldset class="event-types" aria-describedby={fieldMessage(error, 'affiliateIds') ? 'bulk-affiliates-error' : undefined}>
          <legend>Active affiliates to give a code</legend>
          {affiliates.length === 0 ? <p>No active affiliate.</p> : null}
          {affiliates.map((affiliate) => (
            <label key={affiliate.id}>
              <input type="checkbox" checked={chosen.includes(affiliate.id)} onChange={() => toggle(affiliate.id)} />{' '}
              {affiliateName(affiliate)}
            </label>
          ))}
          <FieldError error={error} param="affiliateIds" id="bulk-affiliates-error" />
        </fieldset>
      )}
      <Field
        id="bulk-prefix"
        label="Prefix (optional, at most 20 characters)"
        param="prefix"
        error={error}
        value={prefix}
        onValue={setPrefix}
      />
      <fieldset>
        <legend>Parts of each code, in this order after the prefix</legend>
        {CODE_PARTS.map(({ part, label }) => (
          <label key={part} class="inline">
            <input
              type="checkbox"
              checked={parts[part] === true}
              onChange={(event) => setParts({ ...parts, [part]: (event.target as HTMLInputElement).checked })}
            />{' '}
            {label}
          </label>
        ))}
        <FieldError error={error} param="codeStructure" id="bulk-structure-error" />
      </fieldset>
      <Field
        id="bulk-random-length"
        label="Length of the random part (default 6)"
        param="randomCharsLength"
        error={error}
        inputMode="numeric"
        value={randomCharsLength}
        onValue={setRandomCharsLength}
      />
      <button type="submit">Generate codes</button>
      <FormError error={error} params={BULK_FIELDS} />
      {result ? (
        <div role="status" class="notice">
          <p>
            {result.issued.length} code{result.issued.length === 1 ? '' : 's'} issued
            {result.issued.length
              ? `: ${result.issued.map((issued) => `${issued.code} (${issued.affiliate?.email ?? 'no affiliate'})`).join(', ')}`
              : ''}
            .
          </p>
          {result.alreadyIssued.length ? <p>Already had a code of this coupon: {result.alreadyIssued.map(nameOf).join(', ')}.</p> : null}
          {result.skipped.length ? (
            <ul aria-label="Affiliates given no code">
              {result.skipped.map((skipped) => (
                <li key={skipped.affiliateId}>
                  {nameOf(skipped.affiliateId)}: {skipped.reason}
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
    </form>
  );
}
