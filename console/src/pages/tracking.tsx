import { useState } from 'preact/hooks';
import { ok, type PageProps, type Schemas } from '../client';
import { describedBy, Field } from '../field';
import { FieldError } from '../forms';
import { useProgramSettings } from '../program-settings';
import { Action, ErrorBanner, Notice, Table, useLoad, useSubmit, when } from '../ui';

type Program = Schemas['Program'];

/** The snippet a shop pastes into its pages; data-param only when the program uses another URL modifier than ref. */
export function snippetOf(gateway: string, key: string, urlModifier: string): string {
  const param = urlModifier === 'ref' ? '' : ` data-param="${urlModifier}"`;
  return `<script src="${gateway}/js/affiliate.js" data-key="${key}"${param} defer></script>`;
}

const lines = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);

/**
 * Everything a program needs to track visitors to paid commissions: its publishable key and the
 * snippet to paste, the origins allowed to use it, the attribution rules, and the Stripe webhook.
 */
export function Tracking({ client, can }: PageProps) {
  const program = useLoad(() => ok(client.GET('/api/v1/program')), []);
  const keys = useLoad(() => ok(client.GET('/api/v1/publishable-keys')), []);
  const stripe = useLoad(() => ok(client.GET('/api/v1/integrations/stripe')), []);
  const active = keys.value?.find((key) => key.revokedAt === null) ?? null;
  return (
    <section>
      <h1>Tracking</h1>
      <ErrorBanner error={program.error ?? keys.error} />
      <h2>Tracking script</h2>
      {active && program.value ? (
        <>
          <p>Paste this into every page of your site, before the closing head tag:</p>
          <pre tabIndex={0} aria-label="The snippet to paste">
            {snippetOf(window.location.origin, active.key, program.value.urlModifier)}
          </pre>
          <p>
            At sign-up or checkout, call <code>window.affiliate.convert({'{ email, name, externalId }'})</code>; pass{' '}
            <code>window.affiliate.clickId</code> to Stripe Checkout as <code>client_reference_id</code>.
          </p>
        </>
      ) : (
        <Notice>No publishable key yet: create one to get the snippet.</Notice>
      )}
      <Table
        caption="Publishable keys"
        rows={keys.value ?? []}
        empty="No publishable key yet."
        columns={[
          { title: 'Key', value: (key) => <code>{key.key}</code> },
          { title: 'Created', value: (key) => when(key.createdAt) },
          { title: 'Revoked', value: (key) => when(key.revokedAt) },
          {
            title: '',
            value: (key) =>
              key.revokedAt || !can('revokePublishableKey') ? null : (
                <Action
                  kind="danger"
                  label={`Revoke ${key.key.slice(0, 12)}…`}
                  run={async () => {
                    await ok(client.DELETE('/api/v1/publishable-keys', { body: { publishableKeyId: key.id } }));
                    keys.reload();
                  }}
                />
              ),
          },
        ]}
      />
      {can('createPublishableKey') ? (
        <Action
          label="Create a publishable key"
          run={async () => {
            await ok(client.POST('/api/v1/publishable-keys'));
            keys.reload();
          }}
        />
      ) : null}
      {program.value ? <TrackingSettings client={client} can={can} program={program.value} onSaved={program.reload} /> : null}
      <StripeSettings client={client} can={can} integration={stripe.value} error={stripe.error} onSaved={stripe.reload} />
    </section>
  );
}

function TrackingSettings({ client, can, program, onSaved }: PageProps & { program: Program; onSaved: () => void }) {
  const [origins, setOrigins] = useState(program.allowedOrigins.join('\n'));
  const [windowDays, setWindowDays] = useState(program.attributionWindowDays === null ? '' : String(program.attributionWindowDays));
  const [model, setModel] = useState(program.attributionModel);
  const [dedup, setDedup] = useState(String(program.clickDedupSeconds));
  const { error, saved, save } = useProgramSettings(client, onSaved, () => ({
    allowedOrigins: lines(origins),
    attributionWindowDays: windowDays === '' ? null : Number(windowDays),
    attributionModel: model,
    clickDedupSeconds: Number(dedup),
  }));
  const editable = can('updateOwnProgram');
  const originLines = lines(origins);
  return (
    <form class="panel" onSubmit={save}>
      <h2>Origins and attribution</h2>
      <label for="allowed-origins">Allowed origins (one per line, e.g. https://shop.example.com)</label>
      <textarea
        id="allowed-origins"
        rows={3}
        cols={60}
        value={origins}
        disabled={!editable}
        aria-describedby={originErrors(error, originLines.length)}
        onInput={(event) => setOrigins((event.target as HTMLTextAreaElement).value)}
      />
      <FieldError error={error} param="allowedOrigins" id="allowed-origins-error" />
      {originLines.map((_, index) => (
        <FieldError key={index} error={error} param={`allowedOrigins.${index}`} id={`allowed-origins-${index}-error`} />
      ))}
      <Field
        id="attribution-window"
        label="Attribution window in days (empty: clicks never expire)"
        param="attributionWindowDays"
        error={error}
        type="number"
        min={1}
        max={365}
        value={windowDays}
        disabled={!editable}
        onValue={setWindowDays}
      />
      <label for="attribution-model">Attribution model</label>
      <select
        id="attribution-model"
        value={model}
        disabled={!editable}
        aria-describedby={describedBy(error, 'attributionModel', 'attribution-model-error')}
        onChange={(event) => setModel((event.target as HTMLSelectElement).value as Program['attributionModel'])}
      >
        <option value="FIRST_CLICK">First click</option>
        <option value="LAST_CLICK">Last click</option>
      </select>
      <FieldError error={error} param="attributionModel" id="attribution-model-error" />
      <Field
        id="click-dedup"
        label="Repeat clicks of one visitor count once within (seconds; 0: off)"
        param="clickDedupSeconds"
        error={error}
        type="number"
        min={0}
        required
        value={dedup}
        disabled={!editable}
        onValue={setDedup}
      />
      {editable ? <button type="submit">Save tracking settings</button> : null}
      {saved ? <Notice>Saved.</Notice> : null}
      <ErrorBanner error={error} />
    </form>
  );
}

/** The allowed origins are one field of many lines: the API names the list, or the line at fault (allowedOrigins.1). */
function originErrors(error: unknown, count: number): string | undefined {
  const ids = [
    describedBy(error, 'allowedOrigins', 'allowed-origins-error'),
    ...Array.from({ length: count }, (_, index) => describedBy(error, `allowedOrigins.${index}`, `allowed-origins-${index}-error`)),
  ].filter(Boolean);
  return ids.length > 0 ? ids.join(' ') : undefined;
}

function StripeSettings({
  client,
  can,
  integration,
  error,
  onSaved,
}: PageProps & {
  integration: Schemas['StripeIntegration'] | undefined;
  error: unknown;
  onSaved: () => void;
}) {
  const [secret, setSecret] = useState('');
  const saving = useSubmit(async () => {
    await ok(client.PUT('/api/v1/integrations/stripe', { body: { webhookSecret: secret } }));
    setSecret('');
    onSaved();
  });
  return (
    <form class="panel" onSubmit={saving.submit}>
      <h2>Stripe</h2>
      <ErrorBanner error={error} />
      {integration ? (
        <>
          <p>
            In Stripe, add a webhook endpoint with this URL and the events checkout.session.completed, invoice.paid, charge.refunded and
            charge.dispute.created:
          </p>
          <pre tabIndex={0} aria-label="The Stripe webhook URL">
            {new URL(integration.webhookUrl, window.location.origin).toString()}
          </pre>
          <p>{integration.configured ? `Signing secret set (ends in ${integration.webhookSecretLast4}).` : 'No signing secret yet.'}</p>
        </>
      ) : null}
      {can('configureStripeIntegration') ? (
        <>
          <Field
            id="stripe-secret"
            label="Stripe webhook signing secret (whsec_…)"
            param="webhookSecret"
            error={saving.error}
            type="password"
            autocomplete="off"
            required
            value={secret}
            onValue={setSecret}
          />
          <button type="submit">Save the signing secret</button>
          <ErrorBanner error={saving.error} />
        </>
      ) : null}
    </form>
  );
}
