import { useState } from 'preact/hooks';
import { ok, type PageProps, type Schemas } from '../client';
import { described, Field, FilterSelect } from '../fields';
import { FieldError } from '../forms';
import { paged, rowsOf } from '../paging';
import { Action, ErrorBanner, Notice, Pager, Table, useLoad, useSubmit, when } from '../ui';

type Endpoint = Schemas['WebhookEndpoint'];
type DeliveryStatus = Schemas['WebhookDelivery']['status'];
const DELIVERY_STATUSES: DeliveryStatus[] = ['pending', 'succeeded', 'failed'];
type EventType = Schemas['EventType'];

const lastOf = <T,>(items: T[]) => items[items.length - 1];

function EventTypePicker({
  types,
  chosen,
  onChange,
  legend,
  describedBy: description,
}: {
  types: EventType[];
  chosen: string[];
  onChange: (next: string[]) => void;
  legend: string;
  describedBy?: string | undefined;
}) {
  const toggle = (type: string) => onChange(chosen.includes(type) ? chosen.filter((each) => each !== type) : [...chosen, type]);
  return (
    <fieldset class="event-types" aria-describedby={description}>
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

export function Webhooks({ client, can }: PageProps) {
  const endpoints = useLoad(
    async () => rowsOf(await ok(client.GET('/api/v1/webhook-endpoints', { params: { query: { limit: 100 } } }))),
    [],
  );
  const types = useLoad(async () => (await ok(client.GET('/api/v1/event-types'))).map((each) => each.type), []);
  const [selected, setSelected] = useState<string | null>(null);
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [chosen, setChosen] = useState<string[]>([]);
  const [created, setCreated] = useState<Endpoint | null>(null);
  const creation = useSubmit(async () => {
    const endpoint = await ok(
      client.POST('/api/v1/webhook-endpoints', { body: { url, eventTypes: chosen, ...(description ? { description } : {}) } }),
    );
    setCreated(endpoint);
    setSelected(endpoint.id);
    setUrl('');
    setDescription('');
    endpoints.reload();
  });

  const current = endpoints.value?.find((endpoint) => endpoint.id === selected) ?? null;
  return (
    <section>
      <h1>Webhooks</h1>
      <ErrorBanner error={endpoints.error ?? types.error} />
      <Table
        caption="Endpoints"
        rows={endpoints.value ?? []}
        empty={can('createWebhookEndpoint') ? 'No endpoint yet: create one below.' : 'No endpoint yet.'}
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
      {can('createWebhookEndpoint') ? (
        <form class="panel" onSubmit={creation.submit}>
          <h2>New endpoint</h2>
          <Field id="endpoint-url" label="URL" param="url" error={creation.error} type="url" required value={url} onValue={setUrl} />
          <Field
            id="endpoint-description"
            label="Description"
            param="description"
            error={creation.error}
            value={description}
            onValue={setDescription}
          />
          <EventTypePicker
            legend="Event types to receive"
            types={types.value ?? []}
            chosen={chosen}
            onChange={setChosen}
            describedBy={described(creation.error, 'eventTypes', 'endpoint-event-types')['aria-describedby']}
          />
          <FieldError error={creation.error} param="eventTypes" id="endpoint-event-types-error" />
          <button type="submit">Create endpoint</button>
          <ErrorBanner error={creation.error} />
        </form>
      ) : null}
      {created?.secret ? (
        <Notice>
          Endpoint created. Its signing secret (shown now; reveal it again from the endpoint): <code>{created.secret}</code>
        </Notice>
      ) : null}
      {current ? (
        <EndpointPanel
          key={current.id}
          client={client}
          can={can}
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
  client,
  can,
  endpoint,
  types,
  onChanged,
  onDeleted,
}: PageProps & {
  endpoint: Endpoint;
  types: EventType[];
  onChanged: () => void;
  onDeleted: () => void;
}) {
  const [chosen, setChosen] = useState(endpoint.eventTypes);
  const [secret, setSecret] = useState<Pick<Schemas['WebhookSecret'], 'secret' | 'previousSecretExpiresAt'> | null>(null);
  const [test, setTest] = useState<Schemas['WebhookTestResult'] | null>(null);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [recovered, setRecovered] = useState<number | null>(null);
  const [since, setSince] = useState(new Date(Date.now() - 24 * 3600_000).toISOString().slice(0, 16));
  const update = (change: Omit<Schemas['UpdateWebhookEndpointBody'], 'webhookEndpointId'>) =>
    ok(client.PUT('/api/v1/webhook-endpoints', { body: { webhookEndpointId: endpoint.id, ...change } }));
  const recovery = useSubmit(async () => {
    const answer = await ok(
      client.POST('/api/v1/webhook-deliveries/recover', {
        body: { webhookEndpointId: endpoint.id, since: new Date(`${since}Z`).toISOString() },
      }),
    );
    setRecovered(answer.recovered);
  });

  return (
    <section class="panel" aria-labelledby="endpoint-title">
      <h2 id="endpoint-title">Endpoint {endpoint.url}</h2>
      <EventTypePicker legend="Event types" types={types} chosen={chosen} onChange={setChosen} />
      <div class="actions">
        {can('updateWebhookEndpoint') ? (
          <>
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
                const rotated = await update({ rotateSecret: true });
                setSecret({ secret: rotated.secret ?? '', previousSecretExpiresAt: rotated.previousSecretExpiresAt });
                onChanged();
              }}
            />
          </>
        ) : null}
        {can('getWebhookEndpointSecret') ? (
          <Action
            label="Reveal secret"
            run={async () =>
              setSecret(await ok(client.GET('/api/v1/webhook-endpoints/secret', { params: { query: { webhookEndpointId: endpoint.id } } })))
            }
          />
        ) : null}
        {can('testWebhookEndpoint') ? (
          <Action
            label="Send test event"
            run={async () => setTest(await ok(client.POST('/api/v1/webhook-endpoints/test', { body: { webhookEndpointId: endpoint.id } })))}
          />
        ) : null}
        {!can('deleteWebhookEndpoint') ? null : confirmDelete ? (
          <Action
            label="Confirm delete"
            kind="danger"
            run={async () => {
              await ok(client.DELETE('/api/v1/webhook-endpoints', { body: { webhookEndpointId: endpoint.id } }));
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
      {can('recoverWebhookDeliveries') ? (
        <form class="inline" onSubmit={recovery.submit}>
          <Field
            id="recover-since"
            label="Re-send every failed delivery since (UTC)"
            param="since"
            error={recovery.error}
            type="datetime-local"
            value={since}
            onValue={setSince}
          />
          <button type="submit">Recover failed deliveries</button>
          <ErrorBanner error={recovery.error} />
        </form>
      ) : null}
      {recovered !== null ? <Notice>{recovered} failed deliveries re-sent.</Notice> : null}
      <Deliveries client={client} can={can} endpointId={endpoint.id} types={types} />
    </section>
  );
}

function Deliveries({ client, can, endpointId, types }: PageProps & { endpointId: string; types: EventType[] }) {
  const [status, setStatus] = useState<DeliveryStatus | ''>('');
  const [eventType, setEventType] = useState<EventType | ''>('');
  const [cursor, setCursor] = useState<string | null>(null);
  const deliveries = useLoad(
    () =>
      paged(
        client.GET('/api/v1/webhook-deliveries', {
          params: {
            query: {
              endpointId,
              status: status || undefined,
              eventType: eventType || undefined,
              limit: 25,
              startingAfter: cursor ?? undefined,
            },
          },
        }),
      ),
    [endpointId, status, eventType, cursor],
  );
  return (
    <div class="deliveries">
      <h3>Deliveries</h3>
      <div class="filters">
        <FilterSelect
          id="delivery-status"
          label="Status"
          value={status}
          onValue={(chosen) => {
            setCursor(null);
            setStatus(chosen);
          }}
          options={DELIVERY_STATUSES}
        />
        <FilterSelect
          id="delivery-type"
          label="Event type"
          value={eventType}
          onValue={(chosen) => {
            setCursor(null);
            setEventType(chosen);
          }}
          options={types}
        />
        <button type="button" onClick={deliveries.reload}>
          Refresh
        </button>
      </div>
      <ErrorBanner error={deliveries.error} />
      <Table
        caption="Deliveries of this endpoint, newest first"
        rows={deliveries.value?.data ?? []}
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
            value: (delivery) =>
              can('retryWebhookDelivery') ? (
                <Action
                  label="Resend"
                  run={async () => {
                    await ok(client.POST('/api/v1/webhook-deliveries/retry', { body: { deliveryId: delivery.id } }));
                    deliveries.reload();
                  }}
                />
              ) : null,
          },
        ]}
      />
      <Pager cursor={cursor} next={deliveries.value?.next} onPage={setCursor} />
    </div>
  );
}
