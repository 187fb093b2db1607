import { useState } from 'preact/hooks';
import { ok, type PageProps, type Schemas } from '../client';
import { Action, ErrorBanner, ShownOnce, Table, useLoad, when } from '../ui';
import { FieldError, FormError } from '../forms';
import { described } from '../fields';
import { optionsOf } from '../values';

type Scope = Schemas['ApiScope'];
/** Every scope of the document, in words: a scope the document adds fails to compile here until it has its words. */
const SCOPES = optionsOf<Scope>({
  read: 'read: every lookup',
  write: 'write: every change',
  finance: 'finance: payouts and bank details',
  webhook_secrets: 'webhook_secrets: reveal webhook signing secrets',
});

/**
 * The program's secret API keys, for integrations (people sign in as themselves): an owner creates one
 * with the scopes it needs, sees it this once (only its hash is stored) and revokes it.
 */
export function ApiKeys({ client, can }: PageProps) {
  const keys = useLoad(() => ok(client.GET('/api/v1/api-keys')), []);
  const [scopes, setScopes] = useState<Scope[]>(['read', 'write']);
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<Schemas['CreatedApiKey'] | null>(null);
  const create = async (event: Event) => {
    event.preventDefault();
    setError(null);
    setCreated(null);
    try {
      setCreated(await ok(client.POST('/api/v1/api-keys', { body: { scopes } })));
      keys.reload();
    } catch (failed) {
      setError(failed);
    }
  };
  return (
    <section>
      <h1>API keys</h1>
      <ErrorBanner error={keys.error} />
      <ApiKeyTable
        caption="Secret API keys of this program"
        keys={keys.value ?? []}
        revoke={
          can('revokeOwnApiKey')
            ? async (key) => {
                await ok(client.DELETE('/api/v1/api-keys', { body: { id: key.id } }));
                keys.reload();
              }
            : null
        }
      />
      {can('createOwnApiKey') ? (
        <form class="panel" onSubmit={create} aria-labelledby="new-key-title">
          <h2 id="new-key-title">New API key</h2>
          <fieldset>
            <legend>What the key may do</legend>
            {SCOPES.map(({ value: scope, label: words }) => (
              <label class="check" key={scope}>
                <input
                  type="checkbox"
                  checked={scopes.includes(scope)}
                  onChange={() => setScopes(scopes.includes(scope) ? scopes.filter((each) => each !== scope) : [...scopes, scope])}
                  {...described(error, 'scopes', 'new-key-scopes', true)}
                />{' '}
                {words}
              </label>
            ))}
            <FieldError error={error} param="scopes" id="new-key-scopes-error" list />
          </fieldset>
          <button type="submit">Create API key</button>
          <FormError error={error} params={[]} lists={['scopes']} />
          {created ? <ShownOnce label="New API key, shown this once (only its hash is stored)" value={created.key} /> : null}
        </form>
      ) : null}
    </section>
  );
}

/** A program's secret keys without their secrets (the prefix tells them apart), each with Revoke while it works, when the viewer may revoke. */
export function ApiKeyTable({
  caption,
  keys,
  revoke,
}: {
  caption: string;
  keys: Schemas['ApiKeySummary'][];
  revoke: ((key: Schemas['ApiKeySummary']) => Promise<void>) | null;
}) {
  return (
    <Table
      caption={caption}
      rows={keys}
      columns={[
        { title: 'Key', value: (key) => `${key.displayPrefix}…` },
        { title: 'Scopes', value: (key) => key.scopes.join(', ') },
        { title: 'Created', value: (key) => when(key.createdAt) },
        { title: 'Revoked', value: (key) => when(key.revokedAt) },
        {
          title: 'Change',
          value: (key) =>
            key.revokedAt || !revoke ? null : <Action label={`Revoke ${key.displayPrefix}`} kind="danger" run={() => revoke(key)} />,
        },
      ]}
    />
  );
}
