import { useState } from 'preact/hooks';
import { operatorClient } from '../api';
import { AffiliateApiError, createApiClient, ok, type Schemas } from '../client';
import { Field } from '../fields';
import { Notice } from '../ui';
import { FormError } from '../forms';

type Kind = 'member' | 'operator';

/**
 * The console's door. A team member signs in as themselves (email, password, and the code of their
 * authenticator app when they turned TOTP on: the server asks for it with 401 `totp_required`); the
 * session is the httpOnly cookie the answer sets. The operator signs in with the admin token.
 */
export function SignIn({
  ended,
  onMember,
  onOperator,
}: {
  /** The session just ended under the member's feet (a 401): they are told why they are here. */
  ended: boolean;
  onMember: (session: Schemas['TeamSession']) => void;
  onOperator: (token: string) => void;
}) {
  const [kind, setKind] = useState<Kind>('member');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [totpCode, setTotpCode] = useState('');
  const [askTotp, setAskTotp] = useState(false);
  const [token, setToken] = useState('');
  const [error, setError] = useState<unknown>(null);
  const signInMember = async () => {
    try {
      const body = { email: email.trim(), password, ...(askTotp ? { totpCode: totpCode.trim() } : {}) };
      onMember(await ok(createApiClient({}).POST('/api/v1/team/session', { body })));
    } catch (failed) {
      if (failed instanceof AffiliateApiError && failed.code === 'totp_required') {
        setAskTotp(true);
        return setError(new Error('Enter the 6-digit code of your authenticator app'));
      }
      setError(failed);
    }
  };
  const signInOperator = async () => {
    const admin = token.trim();
    if (!admin) return setError(new Error('Enter the admin token'));
    try {
      // A harmless read proves the token before it is kept.
      await ok(operatorClient(admin).GET('/admin/v1/programs', { params: { query: { limit: 1 } } }));
      onOperator(admin);
    } catch (failed) {
      setError(
        failed instanceof AffiliateApiError && failed.status === 401
          ? new Error(`That admin token was not accepted: ${failed.message}`)
          : failed,
      );
    }
  };
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    await (kind === 'member' ? signInMember() : signInOperator());
  };
  return (
    <main class="sign-in">
      <h1>Affiliate console</h1>
      {ended ? <Notice>Your session ended (after a while without activity, or a change of your role): sign in again.</Notice> : null}
      <form onSubmit={submit}>
        <fieldset>
          <legend>Sign in as</legend>
          <label>
            <input type="radio" name="kind" checked={kind === 'member'} onChange={() => setKind('member')} /> Team member
          </label>
          <label>
            <input type="radio" name="kind" checked={kind === 'operator'} onChange={() => setKind('operator')} /> Operator
          </label>
        </fieldset>
        {kind === 'member' ? (
          <>
            <Field
              id="sign-in-email"
              label="Email"
              type="email"
              autocomplete="username"
              param="email"
              error={error}
              value={email}
              onValue={setEmail}
            />
            <Field
              id="sign-in-password"
              label="Password"
              type="password"
              autocomplete="current-password"
              param="password"
              error={error}
              value={password}
              onValue={setPassword}
            />
            {askTotp ? (
              <Field
                id="sign-in-totp"
                label="Authenticator code"
                inputMode="numeric"
                autocomplete="one-time-code"
                param="totpCode"
                error={error}
                value={totpCode}
                onValue={setTotpCode}
              />
            ) : null}
          </>
        ) : (
          <>
            <Field
              id="sign-in-token"
              label="Admin token"
              type="password"
              autocomplete="off"
              param="token"
              error={null}
              value={token}
              onValue={setToken}
            />
            <p class="hint">Kept in this browser tab only, and sent to this gateway only.</p>
          </>
        )}
        <button type="submit">Sign in</button>
        <FormError error={error} params={['email', 'password', 'totpCode']} />
      </form>
    </main>
  );
}
