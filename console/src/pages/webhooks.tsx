import { useState } from 'preact/hooks';
import { call, query, type Credential } from '../api';
import { Action, ErrorBanner, Notice, Pager, Table, useLoad, when } from '../ui';

type Endpoint = {
  id: string;
  url: string;
  eventTypes: string[];
  description: string | null;
  active: boolean;
  disabledReason: string | null;
  previousSecretExpiresAt: string | null;
  secret?: string;
};
type Attempt = { at: string; statusCode: number | null; latencyMs: number; responseExcerpt: string | null; error: string | null };
type Delivery = { id: string; eventId: string; eventType: string; status: string; attempts: Attempt[]; createdAt: string };
type EventType = { type: string };

const lastOf = <T,>(items: T[]) => items[items.length - 1];

function EventTypePicker({
  types,
  chosen,
  onChange,
  legend,
}: {
  types: string[];
  chosen: string[];
  onChange: (next: string[]) => void;
  legend: string;
}) {
  const toggle = (type: string) => onChange(chosen.includes(type) ? chosen.filter((each) => each !== type) : [...chosen, type]);
  return (
    <fieldset class="event-types">
      <legend>{legend}</legend>
      {['*', ...types].map((type) => (
        <label key={type}>
          <input type="checkbox" checked={chosen.includes(type)} onChange={() => toggle(type)} />{' '}
          {type === '*' ? 'every event type (*)' : type}
        </label>
      ))}
    </fieldset>
  );
}

export function Webhooks({ credential }: { credential: Credential }) {
  const endpoints = useLoad(async () => (await call<Endpoint[]>(credential, 'GET', '/webhook-endpoints?limit=100')).items, []);
  const types = useLoad(async () => (await call<EventType[]>(credential, 'GET', '/event-types')).items.map((each) => each.type), []);
  const [selected, setSelected] = useState<string | null>(null);
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [chosen, setChosen] = useState<string[]>([]);
  const [created, setCreated] = useState<Endpoint | null>(null);
  const [createError, setCreateError] = useState<unknown>(null);

  const create = async (event: Event) => {
    event.preventDefault();
    setCreateError(null);
    try {
      const endpoint = (
        await call<Endpoint>(credential, 'POST', '/webhook-endpoints', { url, eventTypes: chosen, ...(description ? { description } : {}) })
      ).items;
      setCreated(endpoint);
      setSelected(endpoint.id);
      setUrl('');
      setDescription('');
      endpoints.reload();
    } catch (failed) {
      setCreateError(failed);
    }
  };

  const current = endpoints.value?.find((endpoint) => endpoint.id === selected) ?? null;
  return (
    <section>
      <h1>Webhooks</h1>
      <ErrorBanner error={endpoints.error ?? types.error} />
      <Table
        caption="Endpoints"
        rows={endpoints.value ?? []}
        empty="No endpoint yet: create one below."
        columns={[
          { title: 'URL', value: (endpoint) => endpoint.url },
          { title: 'Event types', value: (endpoint) => endpoint.eventTypes.join(', ') },
          {
            title: 'State',
            value: (endpoint) => (endpoint.active ? 'enabled' : `disabled${endpoint.disabledReason ? `: ${endpoint.disabledReason}` : ''}`),
          },
          { title: 'Previous secret signs until', value: (endpoint) => when(endpoint.previousSecretExpiresAt) },
          {
            title: '',
            value: (endpoint) => (
              <button type="button" onClick={() => setSelected(endpoint.id)} aria-label={`Manage ${endpoint.url}`}>
                Manage
              </button>
            ),
          },
        ]}
      />
      <form class="panel" onSubmit={create}>
        <h2>New endpoint</h2>
        <label for="endpoint-url">URL</label>
        <input id="endpoint-url" type="url" required value={url} onInput={(event) => setUrl((event.target as HTMLInputElement).value)} />
        <label for="endpoint-description">Description</label>
        <input
          id="endpoint-description"
          value={description}
          onInput={(event) => setDescription((event.target as HTMLInputElement).value)}
        />
        <EventTypePicker legend="Event types to receive" types={types.value ?? []} chosen={chosen} onChange={setChosen} />
        <button type="submit">Create endpoint</button>
        <ErrorBanner error={createError} />
      </form>
      {created?.secret ? (
        <Notice>
          Endpoint created. Its signing secret (shown now; reveal it again from the endpoint): <code>{created.secret}</code>
        </Notice>
      ) : null}
      {current ? (
        <EndpointPanel
          key={current.id}
          credential={credential}
          endpoint={current}
          types={types.value ?? []}
          onChanged={endpoints.reload}
          onDeleted={() => setSelected(null)}
        />
      ) : null}
    </section>
  );
}

function EndpointPanel({
  credential,
  endpoint,
  types,
  onChanged,
  onDeleted,
}: {
  credential: Credential;
  endpoint: Endpoint;
  types: string[];
  onChanged: () => void;
  onDeleted: () => void;
}) {
  const [chosen, setChosen] = useState(endpoint.eventTypes);
  const [secret, setSecret] = useState<{ secret: string; previousSecretExpiresAt: string | null } | null>(null);
  const [test, setTest] = useState<{
    succeeded: boolean;
    statusCode: number | null;
    latencyMs: number;
    responseExcerpt: string | null;
    error: string | null;
  } | null>(null);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [recovered, setRecovered] = useState<number | null>(null);
  const [since, setSince] = useState(new Date(Date.now() - 24 * 3600_000).toISOString().slice(0, 16));
  const update = (body: Record<string, unknown>) =>
    call<Endpoint>(credential, 'PUT', '/webhook-endpoints', { webhookEndpointId: endpoint.id, ...body });

  return (
    <section class="panel" aria-labelledby="endpoint-title">
      <h2 id="endpoint-title">Endpoint {endpoint.url}</h2>
      <EventTypePicker legend="Event types" types={types} chosen={chosen} onChange={setChosen} />
      <div class="actions">
        <Action
          label="Save event types"
          run={async () => {
            await update({ eventTypes: chosen });
            onChanged();
          }}
        />
        <Action
          label={endpoint.active ? 'Disable' : 'Enable'}
          run={async () => {
            await update({ active: !endpoint.active });
            onChanged();
          }}
        />
        <Action
          label="Rotate secret"
          run={async () => {
            const rotated = (await update({ rotateSecret: true })).items;
            setSecret({ secret: rotated.secret ?? '', previousSecretExpiresAt: rotated.previousSecretExpiresAt });
            onChanged();
          }}
        />
        <Action
          label="Reveal secret"
          run={async () =>
            setSecret((await call(credential, 'GET', `/webhook-endpoints/secret${query({ webhookEndpointId: endpoint.id })}`)).items)
          }
        />
        <Action
          label="Send test event"
          run={async () => setTest((await call(credential, 'POST', '/webhook-endpoints/test', { webhookEndpointId: endpoint.id })).items)}
        />
        {confirmDelete ? (
          <Action
            label="Confirm delete"
            kind="danger"
            run={async () => {
              await call(credential, 'DELETE', '/webhook-endpoints', { webhookEndpointId: endpoint.id });
              onDeleted();
              onChanged();
            }}
          />
        ) : (
          <button type="button" class="danger" onClick={() => setConfirmDelete(true)}>
            Delete
          </button>
        )}
      </div>
      {secret ? (
        <Notice>
          Signing secret: <code class="secret">{secret.secret}</code>
          {secret.previousSecretExpiresAt ? (
            <> · the previous secret keeps signing beside it until {when(secret.previousSecretExpiresAt)}</>
          ) : null}
        </Notice>
      ) : null}
      {test ? (
        <Notice>
          Test event {test.succeeded ? 'delivered' : 'not delivered'}: status {test.statusCode ?? '—'}, {Math.round(test.latencyMs)} ms
          {test.error ? `, ${test.error}` : ''}
          {test.responseExcerpt ? (
            <>
              {' '}
              · answer: <code>{test.responseExcerpt.slice(0, 200)}</code>
            </>
          ) : null}
        </Notice>
      ) : null}
      <form class="inline" onSubmit={(event) => event.preventDefault()}>
        <label for="recover-since">Re-send every failed delivery since (UTC)</label>
        <input
          id="recover-since"
          type="datetime-local"
          value={since}
          onInput={(event) => setSince((event.target as HTMLInputElement).value)}
        />
        <Action
          label="Recover failed deliveries"
          run={async () =>
            setRecovered(
              (
                await call<{ recovered: number }>(credential, 'POST', '/webhook-deliveries/recover', {
                  webhookEndpointId: endpoint.id,
                  since: new Date(`${since}Z`).toISOString(),
                })
              ).items.recovered,
            )
          }
        />
      </form>
      {recovered !== null ? <Notice>{recovered} failed deliveries re-sent.</Notice> : null}
      <Deliveries credential={credential} endpointId={endpoint.id} types={types} />
    </section>
  );
}

function Deliveries({ credential, endpointId, types }: { credential: Credential; endpointId: string; types: string[] }) {
  const [status, setStatus] = useState('');
  const [eventType, setEventType] = useState('');
  const [cursor, setCursor] = useState<string | null>(null);
  const deliveries = useLoad(
    () =>
      call<Delivery[]>(
        credential,
        'GET',
        `/webhook-deliveries${query({ endpointId, status, eventType, limit: 25, startingAfter: cursor })}`,
      ),
    [endpointId, status, eventType, cursor],
  );
  return (
    <div class="deliveries">
      <h3>Deliveries</h3>
      <div class="filters">
        <label for="delivery-status">Status</label>
        <select
          id="delivery-status"
          value={status}
          onChange={(event) => {
            setCursor(null);
            setStatus((event.target as HTMLSelectElement).value);
          }}
        >
          <option value="">any</option>
          <option value="pending">pending</option>
          <option value="succeeded">succeeded</option>
          <option value="failed">failed</option>
        </select>
        <label for="delivery-type">Event type</label>
        <select
          id="delivery-type"
          value={eventType}
          onChange={(event) => {
            setCursor(null);
            setEventType((event.target as HTMLSelectElement).value);
          }}
        >
          <option value="">any</option>
          {types.map((type) => (
            <option key={type} value={type}>
              {type}
            </option>
          ))}
        </select>
        <button type="button" onClick={deliveries.reload}>
          Refresh
        </button>
      </div>
      <ErrorBanner error={deliveries.error} />
      <Table
        caption="Deliveries of this endpoint, newest first"
        rows={deliveries.value?.items ?? []}
        empty="No delivery yet."
        columns={[
          { title: 'Created', value: (delivery) => when(delivery.createdAt) },
          { title: 'Event type', value: (delivery) => delivery.eventType },
          { title: 'Status', value: (delivery) => <span class={`status ${delivery.status}`}>{delivery.status}</span> },
          { title: 'Attempts', value: (delivery) => delivery.attempts.length },
          { title: 'Last answer', value: (delivery) => lastOf(delivery.attempts)?.statusCode ?? lastOf(delivery.attempts)?.error ?? '—' },
          {
            title: 'Latency',
            value: (delivery) => {
              const last = lastOf(delivery.attempts);
              return last ? `${Math.round(last.latencyMs)} ms` : '—';
            },
          },
          {
            title: 'Response excerpt',
            value: (delivery) => <code>{(lastOf(delivery.attempts)?.responseExcerpt ?? '').slice(0, 80)}</code>,
          },
          {
            title: '',
            value: (delivery) => (
              <Action
                label="Resend"
                run={async () => {
                  await call(credential, 'POST', '/webhook-deliveries/retry', { deliveryId: delivery.id });
                  deliveries.reload();
                }}
              />
            ),
          },
        ]}
      />
      <Pager cursor={cursor} next={deliveries.value?.next} onPage={setCursor} />
    </div>
  );
}
