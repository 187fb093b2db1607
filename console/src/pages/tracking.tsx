import { useState } from 'preact/hooks';
import { ok, type PageProps, type Schemas } from '../client';
import { Field, SelectField } from '../fields';
import { ATTRIBUTION_MODELS, useProgramSettings } from '../program-settings';
import { Action, ErrorBanner, Notice, Table, useLoad, when } from '../ui';
import { lines } from '../values';

type Program = Schemas['Program'];

/** The snippet a shop pastes into its pages; data-param only when the program uses another URL modifier than ref. */
export function snippetOf(gateway: string, key: string, urlModifier: string): string {
  const param = urlModifier === 'ref' ? '' : ` data-param="${urlModifier}"`;
  return `<script src="${gateway}/js/affiliate.js" data-key="${key}"${param} defer></script>`;
}

/**
 * Everything a program needs to track visitors to paid commissions: its publishable key and the
 * snippet to paste, the origins allowed to use it and the attribution rules; the Stripe webhook is
 * set on the Program settings page, linked from here.
 */
export function Tracking({ client, can }: PageProps) {
  const program = useLoad(() => ok(client.GET('/api/v1/program')), []);
  const keys = useLoad(() => ok(client.GET('/api/v1/publishable-keys')), []);
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
      <p>
        Commissions from Stripe payments: set the Stripe webhook on <a href="#/settings">Program settings</a>.
      </p>
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
  return (
    <form class="panel" onSubmit={save}>
      <h2>Origins and attribution</h2>
      <Field
        rows={3}
        id="allowed-origins"
        label="Allowed origins (one per line, e.g. https://shop.example.com)"
        param="allowedOrigins"
        error={error}
        list
        value={origins}
        disabled={!editable}
        onValue={setOrigins}
      />
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
      <SelectField
        id="attribution-model"
        label="Attribution model"
        param="attributionModel"
        error={error}
        value={model}
        disabled={!editable}
        onValue={setModel}
        options={ATTRIBUTION_MODELS}
      />
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
