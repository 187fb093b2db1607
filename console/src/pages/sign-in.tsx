import { useState } from 'preact/hooks';
import { ApiError, call, type Credential } from '../api';
import { ErrorBanner } from '../ui';

/** Why a credential was refused, in words (the API's own message is kept beside it). */
function refusal(error: unknown, kind: Credential['kind']): Error {
  if (error instanceof ApiError && error.status === 401) {
    return new Error(
      kind === 'program' ? `That API key was not accepted: ${error.message}` : `That admin token was not accepted: ${error.message}`,
    );
  }
  return error instanceof Error ? error : new Error(String(error));
}

export function SignIn({ onSignedIn }: { onSignedIn: (credential: Credential) => void }) {
  const [kind, setKind] = useState<Credential['kind']>('program');
  const [token, setToken] = useState('');
  const [error, setError] = useState<unknown>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    const credential = { kind, token: token.trim() };
    if (!credential.token) return setError(new Error('Enter an API key or the admin token'));
    try {
      // A harmless read proves the credential before anything is kept.
      await call(credential, 'GET', kind === 'program' ? '/webhook-endpoints?limit=1' : '/programs?limit=1');
      onSignedIn(credential);
    } catch (failed) {
      setError(refusal(failed, kind));
    }
  };
  return (
    <main class="sign-in">
      <h1>Affiliate console</h1>
      <form onSubmit={submit}>
        <fieldset>
          <legend>Sign in as</legend>
          <label>
            <input type="radio" name="kind" checked={kind === 'program'} onChange={() => setKind('program')} /> A program team (its API key)
          </label>
          <label>
            <input type="radio" name="kind" checked={kind === 'operator'} onChange={() => setKind('operator')} /> An operator (the admin
            token)
          </label>
        </fieldset>
        <label for="credential">{kind === 'program' ? 'API key' : 'Admin token'}</label>
        <input
          id="credential"
          type="password"
          autocomplete="off"
          value={token}
          onInput={(event) => setToken((event.target as HTMLInputElement).value)}
        />
        <p class="hint">Kept in this browser tab only, and sent to this gateway only.</p>
        <button type="submit">Sign in</button>
        <ErrorBanner error={error} />
      </form>
    </main>
  );
}
