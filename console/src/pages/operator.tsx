import { useState } from 'preact/hooks';
import { ok, type ApiClient, type Schemas } from '../client';
import { paged } from '../paging';
import { ApiKeyTable } from './api-keys';
import { InviteTable, ROLE_OPTIONS } from './team';
import { CheckboxField, Field, SelectField, fieldsOf } from '../fields';
import { Action, ErrorBanner, Notice, Pager, ShownOnce, Table, useLoad, useSubmit, when } from '../ui';
import { optionalNumber, requiredNumber } from '../values';
import { FormError } from '../forms';

/**
 * The operator's view, on the admin API with the admin token (the typed client with its
 * Authorization header): programs and their settings, their keys, their team (the first owner is
 * invited from here) and the admin audit record.
 */
type Program = Schemas['Program'];
type Role = Schemas['TeamRole'];
type OperatorProps = { client: ApiClient };

export function Programs({ client }: OperatorProps) {
  const programs = useLoad(() => ok(client.GET('/admin/v1/programs', { params: { query: { limit: 100 } } })), []);
  const [name, setName] = useState('');
  const [selected, setSelected] = useState<string | null>(null);
  const current = programs.value?.find((program) => program.id === selected) ?? null;
  const creating = useSubmit(async () => {
    const created = await ok(client.POST('/admin/v1/programs', { body: { name } }));
    setName('');
    setSelected(created.id);
    programs.reload();
  });
  return (
    <section>
      <h1>Programs</h1>
      <ErrorBanner error={programs.error} />
      <Table
        caption="Programs, newest first"
        rows={programs.value ?? []}
        columns={[
          { title: 'Name', value: (program) => program.name },
          { title: 'API access', value: (program) => (program.apiAccess ? 'on' : 'off') },
          {
            title: 'Rate limit',
            value: (program) => (program.rateLimit ? `${program.rateLimit.points} per ${program.rateLimit.duration} s` : 'default'),
          },
          { title: 'Created', value: (program) => when(program.createdAt) },
          {
            title: '',
            value: (program) => (
              <button type="button" onClick={() => setSelected(program.id)} aria-label={`Settings of ${program.name}`}>
                Settings
              </button>
            ),
          },
        ]}
      />
      <form class="panel" onSubmit={creating.submit} aria-labelledby="new-program-title">
        <h2 id="new-program-title">New program</h2>
        <Field id="program-name" label="Name" param="name" error={creating.error} value={name} onValue={setName} />
        <button type="submit">Create program</button>
        <FormError error={creating.error} params={['name']} />
      </form>
      {current ? <ProgramSettings key={current.id} client={client} program={current} onSaved={programs.reload} /> : null}
    </section>
  );
}

function ProgramSettings({ client, program, onSaved }: OperatorProps & { program: Program; onSaved: () => void }) {
  const [name, setName] = useState(program.name);
  const [apiAccess, setApiAccess] = useState(program.apiAccess);
  const [requireApproval, setRequireApproval] = useState(program.requireApproval);
  const [rate, setRate] = useState(String(program.defaultCommissionRate));
  const [points, setPoints] = useState(program.rateLimit ? String(program.rateLimit.points) : '');
  const [duration, setDuration] = useState(program.rateLimit ? String(program.rateLimit.duration) : '');
  // A rate limit is set by its two numbers together; both empty: the gateway's default (null).
  const { error, done, submit } = useSubmit(async () => {
    const rateLimit = points || duration ? { points: requiredNumber(points), duration: requiredNumber(duration) } : null;
    await ok(
      client.PUT('/admin/v1/programs/{id}', {
        params: { path: { id: program.id } },
        body: { name, apiAccess, requireApproval, defaultCommissionRate: optionalNumber(rate), rateLimit },
      }),
    );
    onSaved();
  });
  const field = fieldsOf(error);
  return (
    <>
      <form class="panel" onSubmit={submit} aria-labelledby="settings-title">
        <h2 id="settings-title">Settings of {program.name}</h2>
        <Field id="settings-name" label="Name" {...field('name', name, setName)} />
        <CheckboxField
          id="settings-api-access"
          label="API access"
          param="apiAccess"
          error={error}
          checked={apiAccess}
          onChecked={setApiAccess}
        />
        <CheckboxField
          id="settings-require-approval"
          label="New affiliates wait for approval"
          param="requireApproval"
          error={error}
          checked={requireApproval}
          onChecked={setRequireApproval}
        />
        <Field
          id="settings-rate"
          label="Default commission rate (%)"
          inputMode="decimal"
          {...field('defaultCommissionRate', rate, setRate)}
        />
        <fieldset>
          <legend>Rate limit per key, route and method (empty: the gateway's default)</legend>
          <Field id="settings-points" label="Requests" inputMode="numeric" {...field('rateLimit.points', points, setPoints)} />
          <Field id="settings-duration" label="Per seconds" inputMode="numeric" {...field('rateLimit.duration', duration, setDuration)} />
        </fieldset>
        <button type="submit">Save settings</button>
        {done ? <Notice>Settings saved.</Notice> : null}
        <FormError
          error={error}
          params={['name', 'apiAccess', 'requireApproval', 'defaultCommissionRate', 'rateLimit', 'rateLimit.points', 'rateLimit.duration']}
        />
      </form>
      <ApiKeys client={client} programId={program.id} />
      <PublishableKeys client={client} programId={program.id} />
      <Members client={client} programId={program.id} />
    </>
  );
}

const inProgram = (programId: string) => ({ params: { path: { id: programId } } });

function ApiKeys({ client, programId }: OperatorProps & { programId: string }) {
  const keys = useLoad(() => ok(client.GET('/admin/v1/programs/{id}/api-keys', inProgram(programId))), [programId]);
  const [created, setCreated] = useState<string | null>(null);
  return (
    <div class="keys">
      <h3>API keys</h3>
      <ErrorBanner error={keys.error} />
      <ApiKeyTable
        caption="API keys of this program"
        keys={keys.value ?? []}
        revoke={async (key) => {
          await ok(client.DELETE('/admin/v1/api-keys/{id}', inProgram(key.id)));
          keys.reload();
        }}
      />
      <Action
        label="Create API key"
        run={async () => {
          setCreated((await ok(client.POST('/admin/v1/programs/{id}/api-keys', { ...inProgram(programId), body: {} }))).key);
          keys.reload();
        }}
      />
      {created ? (
        <Notice>
          New API key, shown this once (only its hash is stored): <code class="secret">{created}</code>
        </Notice>
      ) : null}
    </div>
  );
}

/**
 * The program's team as the operator sees it: its members and the invites waiting, and an invite of
 * a member (a new program's first OWNER, above all): the single-use link to hand over.
 */
function Members({ client, programId }: OperatorProps & { programId: string }) {
  const team = useLoad(() => ok(client.GET('/admin/v1/programs/{id}/members', inProgram(programId))), [programId]);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('OWNER');
  const [error, setError] = useState<unknown>(null);
  const [invited, setInvited] = useState<Schemas['TeamInviteCreated'] | null>(null);
  const invite = async () => {
    setError(null);
    setInvited(null);
    try {
      setInvited(
        await ok(client.POST('/admin/v1/programs/{id}/members', { ...inProgram(programId), body: { email: email.trim(), role } })),
      );
      setEmail('');
      team.reload();
    } catch (failed) {
      setError(failed);
    }
  };
  return (
    <div class="keys">
      <h3>Team</h3>
      <ErrorBanner error={team.error} />
      <Table
        caption="Members of this program"
        rows={team.value?.members ?? []}
        empty="No member yet: invite the first owner."
        columns={[
          { title: 'Email', value: (member) => member.email },
          { title: 'Role', value: (member) => member.role },
          { title: 'Second factor', value: (member) => (member.totpEnabled ? 'on' : 'off') },
          { title: 'Last sign-in', value: (member) => when(member.lastSignInAt) },
        ]}
      />
      <InviteTable caption="Invites of this program not accepted yet" invites={team.value?.invites ?? []} />
      <Field
        id="member-email"
        label="Email of the member to invite"
        type="email"
        autocomplete="off"
        param="email"
        error={error}
        value={email}
        onValue={setEmail}
      />
      <SelectField id="member-role" label="Their role" param="role" error={error} value={role} onValue={setRole} options={ROLE_OPTIONS} />
      <button type="button" onClick={invite}>
        {role === 'OWNER' ? 'Invite an owner' : 'Invite a member'}
      </button>
      <FormError error={error} params={['email', 'role']} />
      {invited ? (
        <ShownOnce
          label={`Invite link for ${invited.invite.email} (${invited.invite.role}): it works once, until ${when(invited.invite.expiresAt)}`}
          value={invited.inviteUrl}
        />
      ) : null}
    </div>
  );
}

/** Publishable keys are public by design (they sit in shops' pages), so they are shown in full. */
function PublishableKeys({ client, programId }: OperatorProps & { programId: string }) {
  const keys = useLoad(() => ok(client.GET('/admin/v1/programs/{id}/publishable-keys', inProgram(programId))), [programId]);
  return (
    <div class="keys">
      <h3>Publishable keys</h3>
      <ErrorBanner error={keys.error} />
      <Table
        caption="Publishable keys of this program (for the tracking script)"
        rows={keys.value ?? []}
        columns={[
          { title: 'Key', value: (key) => <code>{key.key}</code> },
          { title: 'Created', value: (key) => when(key.createdAt) },
          { title: 'Revoked', value: (key) => when(key.revokedAt) },
          {
            title: '',
            value: (key) =>
              key.revokedAt ? null : (
                <Action
                  label={`Revoke ${key.key.slice(0, 12)}…`}
                  kind="danger"
                  run={async () => {
                    await ok(client.DELETE('/admin/v1/publishable-keys/{id}', inProgram(key.id)));
                    keys.reload();
                  }}
                />
              ),
          },
        ]}
      />
      <Action
        label="Create publishable key"
        run={async () => {
          await ok(client.POST('/admin/v1/programs/{id}/publishable-keys', inProgram(programId)));
          keys.reload();
        }}
      />
    </div>
  );
}

export function Audit({ client }: OperatorProps) {
  const [cursor, setCursor] = useState<string | null>(null);
  const records = useLoad(async () => {
    const query = { limit: 50, ...(cursor ? { startingAfter: cursor } : {}) };
    const { data, next } = await paged(client.GET('/admin/v1/audit-records', { params: { query } }));
    return { items: data, next };
  }, [cursor]);
  return (
    <section>
      <h1>Audit record</h1>
      <ErrorBanner error={records.error} />
      <Table
        caption="Admin actions and refused attempts, newest first"
        rows={records.value?.items ?? []}
        columns={[
          { title: 'When', value: (record) => when(record.at) },
          {
            title: 'Who',
            value: (record) =>
              `${record.actor.credential}${record.actor.address ? ` from ${record.actor.address}` : ''}${record.actor.user ? ` (${record.actor.user})` : ''}`,
          },
          { title: 'Action', value: (record) => record.action },
          { title: 'Target', value: (record) => record.targetId ?? '—' },
          { title: 'Status', value: (record) => record.status },
        ]}
      />
      <Pager cursor={cursor} next={records.value?.next} onPage={setCursor} />
    </section>
  );
}
