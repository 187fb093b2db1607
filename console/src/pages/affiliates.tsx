import { useState } from 'preact/hooks';
import { ok, type PageProps, type Schemas } from '../client';
import { Field, FilterSelect, SelectField } from '../fields';
import { FormError } from '../forms';
import { everyPage, paged, rowsOf } from '../paging';
import { Action, ErrorBanner, Notice, Pager, Table, useLoad, useSubmit, when, type Column } from '../ui';
import { optionalNumber, shownNumber } from '../values';

type Affiliate = Schemas['Affiliate'];
type Status = Affiliate['status'];

const PAGE = 50;
const STATUSES: { value: Status; label: string }[] = [
  { value: 'PENDING', label: 'PENDING: waiting for approval' },
  { value: 'ACTIVE', label: 'ACTIVE: earns commission' },
  { value: 'REJECTED', label: 'REJECTED: application refused' },
  { value: 'DISABLED', label: 'DISABLED: no longer active' },
];
/** The plan select's value for "no plan of its own": PUT sends null, back to the program's default plan. */
const PROGRAM_DEFAULT = '';

/** The first columns of both tables: who the affiliate is. */
const WHO: Column<Affiliate>[] = [
  { title: 'Name', value: (affiliate) => `${affiliate.firstName} ${affiliate.lastName}` },
  { title: 'Email', value: (affiliate) => affiliate.email },
];

/** What an applicant answered on the sign-up page (POST /join/{slug}), question by question. */
function SignupAnswers({ affiliate }: { affiliate: Affiliate }) {
  if (!affiliate.signupAnswers.length) return <>None</>;
  return (
    <dl>
      {affiliate.signupAnswers.map((answer) => (
        <div key={answer.questionId}>
          <dt>{answer.question}</dt>
          <dd>{answer.answer}</dd>
        </div>
      ))}
    </dl>
  );
}

/**
 * Affiliates: the applications waiting for approval with their sign-up answers, approved (on a plan
 * chosen here) or rejected, and every affiliate of the program, edited as far as PUT /affiliates allows.
 */
export function Affiliates({ client, can }: PageProps) {
  const plans = useLoad(
    async () =>
      can('getCommissionPlans')
        ? everyPage((startingAfter) => client.GET('/api/v1/commission-plans', { params: { query: { limit: 1000, startingAfter } } }))
        : [],
    [],
  );
  const [round, setRound] = useState(0);
  const changed = () => setRound((n) => n + 1);
  return (
    <section>
      <h1>Affiliates</h1>
      <ErrorBanner error={plans.error} />
      <ApprovalQueue client={client} can={can} plans={plans.value ?? []} round={round} onDecided={changed} />
      <AffiliateList client={client} can={can} plans={plans.value ?? []} round={round} onChanged={changed} />
    </section>
  );
}

type Shared = PageProps & { plans: Schemas['CommissionPlan'][]; round: number };

function PlanSelect({
  id,
  label,
  plans,
  value,
  onValue,
  error,
}: {
  id: string;
  label: string;
  plans: Schemas['CommissionPlan'][];
  value: string;
  onValue: (value: string) => void;
  error: unknown;
}) {
  const fallback = plans.find((plan) => plan.isDefault);
  return (
    <SelectField
      id={id}
      label={label}
      param="commissionPlanId"
      error={error}
      value={value}
      onValue={onValue}
      options={[
        { value: PROGRAM_DEFAULT, label: fallback ? `The program's default (${fallback.name})` : "The program's default (none set)" },
        ...plans.map((plan) => ({ value: plan.id, label: plan.name })),
      ]}
    />
  );
}

function ApprovalQueue({ client, can, plans, round, onDecided }: Shared & { onDecided: () => void }) {
  const [cursor, setCursor] = useState<string | null>(null);
  const pending = useLoad(async () => {
    const query = { status: 'PENDING' as const, limit: PAGE, ...(cursor ? { startingAfter: cursor } : {}) };
    const { data, next } = await paged(client.GET('/api/v1/affiliates', { params: { query } }));
    return { items: rowsOf(data), next };
  }, [cursor, round]);
  const [chosenPlans, setChosenPlans] = useState<Record<string, string>>({});
  // The API's refusal of each affiliate's decision, by affiliate id.
  const [refusals, setRefusals] = useState<Record<string, unknown>>({});
  const decide = async (affiliate: Affiliate, status: 'ACTIVE' | 'REJECTED') => {
    const plan = chosenPlans[affiliate.id] ?? PROGRAM_DEFAULT;
    setRefusals({ ...refusals, [affiliate.id]: null });
    try {
      await ok(
        client.PUT('/api/v1/affiliates', {
          body: {
            affiliateId: affiliate.id,
            status,
            ...(status === 'ACTIVE' && plan !== PROGRAM_DEFAULT ? { commissionPlanId: plan } : {}),
          },
        }),
      );
    } catch (failed) {
      // Shown by the one rule: a refused plan beside its select, anything else in the row's banner.
      setRefusals({ ...refusals, [affiliate.id]: failed });
      return;
    }
    onDecided();
  };
  const deciding = can('updateAffiliate');
  const rows = pending.value?.items ?? [];
  return (
    <div class="panel">
      <h2>Applications waiting for approval</h2>
      <ErrorBanner error={pending.error} />
      <Table
        caption="Applications waiting for approval, newest first"
        rows={rows}
        empty="No application is waiting."
        columns={[
          ...WHO,
          { title: 'Applied', value: (affiliate) => when(affiliate.createdAt) },
          { title: 'Sign-up answers', value: (affiliate) => <SignupAnswers affiliate={affiliate} /> },
          ...(deciding
            ? [
                {
                  title: 'Decision',
                  value: (affiliate: Affiliate) => (
                    <>
                      {plans.length ? (
                        <PlanSelect
                          id={`approve-plan-${affiliate.id}`}
                          label={`Plan for ${affiliate.email}`}
                          plans={plans}
                          value={chosenPlans[affiliate.id] ?? PROGRAM_DEFAULT}
                          onValue={(plan) => setChosenPlans({ ...chosenPlans, [affiliate.id]: plan })}
                          error={refusals[affiliate.id]}
                        />
                      ) : null}
                      <Action label={`Approve ${affiliate.email}`} run={() => decide(affiliate, 'ACTIVE')} />
                      <Action kind="danger" label={`Reject ${affiliate.email}`} run={() => decide(affiliate, 'REJECTED')} />
                      <FormError error={refusals[affiliate.id]} params={plans.length ? ['commissionPlanId'] : []} />
                    </>
                  ),
                },
              ]
            : []),
        ]}
      />
      <Pager cursor={cursor} next={pending.value?.next} onPage={setCursor} />
    </div>
  );
}

function AffiliateList({ client, can, plans, round, onChanged }: Shared & { onChanged: () => void }) {
  const [status, setStatus] = useState<Status | ''>('');
  const [email, setEmail] = useState('');
  const [searched, setSearched] = useState('');
  const [cursor, setCursor] = useState<string | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const affiliates = useLoad(async () => {
    const query = searched
      ? { email: searched }
      : { limit: PAGE, ...(status ? { status } : {}), ...(cursor ? { startingAfter: cursor } : {}) };
    const { data, next } = await paged(client.GET('/api/v1/affiliates', { params: { query } }));
    return { items: rowsOf(data), next };
  }, [status, searched, cursor, round]);
  const rows = affiliates.value?.items ?? [];
  const current = rows.find((affiliate) => affiliate.id === editing) ?? null;
  return (
    <div class="panel">
      <h2>Every affiliate</h2>
      <form
        class="filters"
        onSubmit={(event) => {
          event.preventDefault();
          setCursor(null);
          setSearched(email.trim());
        }}
      >
        <FilterSelect
          id="affiliates-status"
          label="Status"
          value={status}
          onValue={(chosen) => {
            setCursor(null);
            setStatus(chosen);
          }}
          options={STATUSES.map((each) => each.value)}
        />
        <label for="affiliates-email">Email</label>
        <input id="affiliates-email" type="email" value={email} onInput={(event) => setEmail((event.target as HTMLInputElement).value)} />
        <button type="submit">Find</button>
      </form>
      <ErrorBanner error={affiliates.error} />
      <Table
        caption="Affiliates of the program, newest first"
        rows={rows}
        empty="No affiliate here."
        columns={[
          ...WHO,
          { title: 'Status', value: (affiliate) => <span class={`status ${affiliate.status}`}>{affiliate.status}</span> },
          { title: 'Commission plan', value: (affiliate) => affiliate.commissionPlan?.name ?? `own rate ${affiliate.commissionRate}%` },
          { title: 'Links', value: (affiliate) => affiliate.affiliateLinks.map((link) => link.link).join(', ') },
          { title: 'Created', value: (affiliate) => when(affiliate.createdAt) },
          ...(can('updateAffiliate')
            ? [
                {
                  title: '',
                  value: (affiliate: Affiliate) => (
                    <button type="button" onClick={() => setEditing(affiliate.id)} aria-label={`Edit ${affiliate.email}`}>
                      Edit
                    </button>
                  ),
                },
              ]
            : []),
        ]}
      />
      <Pager cursor={cursor} next={affiliates.value?.next} onPage={setCursor} />
      {current ? <EditAffiliate key={current.id} client={client} affiliate={current} plans={plans} onSaved={onChanged} /> : null}
    </div>
  );
}

const EDITED_FIELDS = ['firstName', 'lastName', 'email', 'status', 'commissionRate', 'commissionPlanId', 'affiliateLink'];

function EditAffiliate({
  client,
  affiliate,
  plans,
  onSaved,
}: {
  client: PageProps['client'];
  affiliate: Affiliate;
  plans: Schemas['CommissionPlan'][];
  onSaved: () => void;
}) {
  const [firstName, setFirstName] = useState(affiliate.firstName);
  const [lastName, setLastName] = useState(affiliate.lastName);
  const [email, setEmail] = useState(affiliate.email);
  const [status, setStatus] = useState<Status>(affiliate.status);
  const [commissionRate, setCommissionRate] = useState(shownNumber(affiliate.commissionRate));
  // The plan shown is the affiliate's own or the default: both read as the plan in force, and only a change is sent.
  const [plan, setPlan] = useState(affiliate.commissionPlan?.id ?? PROGRAM_DEFAULT);
  const [newLink, setNewLink] = useState('');
  // Only what the person changed is sent: an untouched field keeps what another member may have set meanwhile.
  const { error, done, submit } = useSubmit(async () => {
    const rate = optionalNumber(commissionRate);
    await ok(
      client.PUT('/api/v1/affiliates', {
        body: {
          affiliateId: affiliate.id,
          ...(firstName !== affiliate.firstName ? { firstName } : {}),
          ...(lastName !== affiliate.lastName ? { lastName } : {}),
          ...(email !== affiliate.email ? { email } : {}),
          ...(status !== affiliate.status ? { status } : {}),
          ...(rate !== affiliate.commissionRate && rate !== undefined ? { commissionRate: rate } : {}),
          ...(plan !== (affiliate.commissionPlan?.id ?? PROGRAM_DEFAULT)
            ? { commissionPlanId: plan === PROGRAM_DEFAULT ? null : plan }
            : {}),
          ...(newLink.trim() ? { affiliateLink: newLink.trim() } : {}),
        },
      }),
    );
    setNewLink('');
    onSaved();
  });
  return (
    <form class="panel" onSubmit={submit} noValidate aria-labelledby="edit-affiliate-title">
      <h3 id="edit-affiliate-title">Edit {affiliate.email}</h3>
      <Field id="affiliate-first-name" label="First name" param="firstName" error={error} value={firstName} onValue={setFirstName} />
      <Field id="affiliate-last-name" label="Last name" param="lastName" error={error} value={lastName} onValue={setLastName} />
      <Field id="affiliate-email" label="Email address" param="email" error={error} type="email" value={email} onValue={setEmail} />
      <SelectField
        id="affiliate-status"
        label="Status"
        param="status"
        error={error}
        value={status}
        onValue={setStatus}
        options={STATUSES}
      />
      <Field
        id="affiliate-commission-rate"
        label="Own commission rate (%), when no plan applies"
        param="commissionRate"
        error={error}
        inputMode="decimal"
        value={commissionRate}
        onValue={setCommissionRate}
      />
      <PlanSelect id="affiliate-plan" label="Commission plan" plans={plans} value={plan} onValue={setPlan} error={error} />
      <Field
        id="affiliate-new-link"
        label="Add a referral link (letters, numbers and hyphens)"
        param="affiliateLink"
        error={error}
        value={newLink}
        onValue={setNewLink}
      />
      <button type="submit">Save affiliate</button>
      {done ? <Notice>Saved.</Notice> : null}
      <FormError error={error} params={EDITED_FIELDS} />
    </form>
  );
}
