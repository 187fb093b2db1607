import type { PublishableKey } from '@affiliate/contracts';
import { useState } from 'preact/hooks';
import { call, query, type Credential } from '../api';
import { Action, ErrorBanner, Notice, Pager, Table, useLoad, when } from '../ui';

type Program = {
  id: string;
  name: string;
  apiAccess: boolean;
  requireApproval: boolean;
  defaultCommissionRate: number;
  rateLimit: { points: number; duration: number } | null;
  createdAt: string;
};
type ApiKey = { id: string; displayPrefix: string; scopes: string[]; createdAt: string; revokedAt: string | null };
type AuditRecord = {
  id: string;
  at: string;
  actor: { credential: string; address: string | null; user: string | null };
  action: string;
  targetId: string | null;
  status: number;
};

const valueOf = (event: Event) => (event.target as HTMLInputElement).value;

export function Programs({ credential }: { credential: Credential }) {
  const programs = useLoad(async () => (await call<Program[]>(credential, 'GET', '/programs?limit=100')).items, []);
  const [name, setName] = useState('');
  const [selected, setSelected] = useState<string | null>(null);
  const current = programs.value?.find((program) => program.id === selected) ?? null;
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
      <form class="panel" onSubmit={(event) => event.preventDefault()}>
        <h2>New program</h2>
        <label for="program-name">Name</label>
        <input id="program-name" value={name} onInput={(event) => setName(valueOf(event))} />
        <Action
          label="Create program"
          run={async () => {
            const created = (await call<Program>(credential, 'POST', '/programs', { name })).items;
            setName('');
            setSelected(created.id);
            programs.reload();
          }}
        />
      </form>
      {current ? <ProgramSettings key={current.id} credential={credential} program={current} onSaved={programs.reload} /> : null}
    </section>
  );
}

function ProgramSettings({ credential, program, onSaved }: { credential: Credential; program: Program; onSaved: () => void }) {
  const [name, setName] = useState(program.name);
  const [apiAccess, setApiAccess] = useState(program.apiAccess);
  const [requireApproval, setRequireApproval] = useState(program.requireApproval);
  const [rate, setRate] = useState(String(program.defaultCommissionRate));
  const [points, setPoints] = useState(program.rateLimit ? String(program.rateLimit.points) : '');
  const [duration, setDuration] = useState(program.rateLimit ? String(program.rateLimit.duration) : '');
  const [saved, setSaved] = useState(false);
  const save = async () => {
    setSaved(false);
    const rateLimit = points && duration ? { points: Number(points), duration: Number(duration) } : null;
    await call(credential, 'PUT', `/programs/${program.id}`, {
      name,
      apiAccess,
      requireApproval,
      defaultCommissionRate: Number(rate),
      rateLimit,
    });
    setSaved(true);
    onSaved();
  };
  return (
    <form class="panel" onSubmit={(event) => event.preventDefault()} aria-labelledby="settings-title">
      <h2 id="settings-title">Settings of {program.name}</h2>
      <label for="settings-name">Name</label>
      <input id="settings-name" value={name} onInput={(event) => setName(valueOf(event))} />
      <label class="check">
        <input type="checkbox" checked={apiAccess} onChange={() => setApiAccess(!apiAccess)} /> API access
      </label>
      <label class="check">
        <input type="checkbox" checked={requireApproval} onChange={() => setRequireApproval(!requireApproval)} /> New affiliates wait for
        approval
      </label>
      <label for="settings-rate">Default commission rate (%)</label>
      <input id="settings-rate" inputMode="decimal" value={rate} onInput={(event) => setRate(valueOf(event))} />
      <fieldset>
        <legend>Rate limit per key, route and method (empty: the gateway's default)</legend>
        <label for="settings-points">Requests</label>
        <input id="settings-points" inputMode="numeric" value={points} onInput={(event) => setPoints(valueOf(event))} />
        <label for="settings-duration">Per seconds</label>
        <input id="settings-duration" inputMode="numeric" value={duration} onInput={(event) => setDuration(valueOf(event))} />
      </fieldset>
      <Action label="Save settings" run={save} />
      {saved ? <Notice>Settings saved.</Notice> : null}
      <ApiKeys credential={credential} programId={program.id} />
      <PublishableKeys credential={credential} programId={program.id} />
    </form>
  );
}

function ApiKeys({ credential, programId }: { credential: Credential; programId: string }) {
  const keys = useLoad(async () => (await call<ApiKey[]>(credential, 'GET', `/programs/${programId}/api-keys`)).items, [programId]);
  const [created, setCreated] = useState<string | null>(null);
  return (
    <div class="keys">
      <h3>API keys</h3>
      <ErrorBanner error={keys.error} />
      <Table
        caption="API keys of this program"
        rows={keys.value ?? []}
        columns={[
          { title: 'Key', value: (key) => `${key.displayPrefix}…` },
          { title: 'Scopes', value: (key) => key.scopes.join(', ') },
          { title: 'Created', value: (key) => when(key.createdAt) },
          { title: 'Revoked', value: (key) => when(key.revokedAt) },
          {
            title: '',
            value: (key) =>
              key.revokedAt ? null : (
                <Action
                  label={`Revoke ${key.displayPrefix}`}
                  kind="danger"
                  run={async () => {
                    await call(credential, 'DELETE', `/api-keys/${key.id}`);
                    keys.reload();
                  }}
                />
              ),
          },
        ]}
      />
      <Action
        label="Create API key"
        run={async () => {
          setCreated((await call<{ key: string }>(credential, 'POST', `/programs/${programId}/api-keys`, {})).items.key);
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

/** Publishable keys are public by design (they sit in shops' pages), so they are shown in full. */
function PublishableKeys({ credential, programId }: { credential: Credential; programId: string }) {
  const keys = useLoad(
    async () => (await call<PublishableKey[]>(credential, 'GET', `/programs/${programId}/publishable-keys`)).items,
    [programId],
  );
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
                    await call(credential, 'DELETE', `/publishable-keys/${key.id}`);
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
          await call(credential, 'POST', `/programs/${programId}/publishable-keys`, {});
          keys.reload();
        }}
      />
    </div>
  );
}

export function Audit({ credential }: { credential: Credential }) {
  const [cursor, setCursor] = useState<string | null>(null);
  const records = useLoad(
    () => call<AuditRecord[]>(credential, 'GET', `/audit-records${query({ limit: 50, startingAfter: cursor })}`),
    [cursor],
  );
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
