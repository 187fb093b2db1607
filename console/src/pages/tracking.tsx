import type { Program, PublishableKey, StripeIntegration } from '@affiliate/contracts';
import { useState } from 'preact/hooks';
import { call, type Credential } from '../api';
import { Action, ErrorBanner, Notice, Table, useLoad, useProgramSettingsForm, when } from '../ui';

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
export function Tracking({ credential }: { credential: Credential }) {
  const program = useLoad(async () => (await call<Program>(credential, 'GET', '/program')).items, []);
  const keys = useLoad(async () => (await call<PublishableKey[]>(credential, 'GET', '/publishable-keys')).items, []);
  const stripe = useLoad(async () => (await call<StripeIntegration>(credential, 'GET', '/integrations/stripe')).items, []);
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
              key.revokedAt ? null : (
                <Action
                  kind="danger"
                  label={`Revoke ${key.key.slice(0, 12)}…`}
                  run={async () => {
                    await call(credential, 'DELETE', '/publishable-keys', { publishableKeyId: key.id });
                    keys.reload();
                  }}
                />
              ),
          },
        ]}
      />
      <Action
        label="Create a publishable key"
        run={async () => {
          await call(credential, 'POST', '/publishable-keys');
          keys.reload();
        }}
      />
      {program.value ? <TrackingSettings credential={credential} program={program.value} onSaved={program.reload} /> : null}
      <StripeSettings credential={credential} integration={stripe.value} error={stripe.error} onSaved={stripe.reload} />
    </section>
  );
}

function TrackingSettings({ credential, program, onSaved }: { credential: Credential; program: Program; onSaved: () => void }) {
  const [origins, setOrigins] = useState(program.allowedOrigins.join('\n'));
  const [windowDays, setWindowDays] = useState(program.attributionWindowDays === null ? '' : String(program.attributionWindowDays));
  const [model, setModel] = useState(program.attributionModel);
  const [dedup, setDedup] = useState(String(program.clickDedupSeconds));
  const { error, saved, save } = useProgramSettingsForm(credential, onSaved, () => ({
    allowedOrigins: lines(origins),
    attributionWindowDays: windowDays === '' ? null : Number(windowDays),
    attributionModel: model,
    clickDedupSeconds: Number(dedup),
  }));
  return (
    <form class="panel" onSubmit={save}>
      <h2>Origins and attribution</h2>
      <label for="allowed-origins">Allowed origins (one per line, e.g. https://shop.example.com)</label>
      <textarea
        id="allowed-origins"
        rows={3}
        cols={60}
        value={origins}
        onInput={(event) => setOrigins((event.target as HTMLTextAreaElement).value)}
      />
      <label for="attribution-window">Attribution window in days (empty: clicks never expire)</label>
      <input
        id="attribution-window"
        type="number"
        min={1}
        max={365}
        value={windowDays}
        onInput={(event) => setWindowDays((event.target as HTMLInputElement).value)}
      />
      <label for="attribution-model">Attribution model</label>
      <select
        id="attribution-model"
        value={model}
        onChange={(event) => setModel((event.target as HTMLSelectElement).value as Program['attributionModel'])}
      >
        <option value="FIRST_CLICK">First click</option>
        <option value="LAST_CLICK">Last click</option>
      </select>
      <label for="click-dedup">Repeat clicks of one visitor count once within (seconds; 0: off)</label>
      <input
        id="click-dedup"
        type="number"
        min={0}
        required
        value={dedup}
        onInput={(event) => setDedup((event.target as HTMLInputElement).value)}
      />
      <button type="submit">Save tracking settings</button>
      {saved ? <Notice>Saved.</Notice> : null}
      <ErrorBanner error={error} />
    </form>
  );
}

function StripeSettings({
  credential,
  integration,
  error,
  onSaved,
}: {
  credential: Credential;
  integration: StripeIntegration | undefined;
  error: unknown;
  onSaved: () => void;
}) {
  const [secret, setSecret] = useState('');
  const [saveError, setSaveError] = useState<unknown>(null);
  const save = async (event: Event) => {
    event.preventDefault();
    setSaveError(null);
    try {
      await call(credential, 'PUT', '/integrations/stripe', { webhookSecret: secret });
      setSecret('');
      onSaved();
    } catch (failed) {
      setSaveError(failed);
    }
  };
  return (
    <form class="panel" onSubmit={save}>
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
      <label for="stripe-secret">Stripe webhook signing secret (whsec_…)</label>
      <input
        id="stripe-secret"
        type="password"
        autocomplete="off"
        required
        value={secret}
        onInput={(event) => setSecret((event.target as HTMLInputElement).value)}
      />
      <button type="submit">Save the signing secret</button>
      <ErrorBanner error={saveError} />
    </form>
  );
}
