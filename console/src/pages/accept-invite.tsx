import { useLayoutEffect, useState } from 'preact/hooks';
import { createApiClient, ok, type Schemas } from '../client';
import { Field } from '../fields';
import { FormError } from '../forms';

/**
 * Where an invite link lands (`#/accept-invite?token=…`, the token in the fragment so that no server
 * log sees it): the invited person chooses a password and is signed in as the new member. The link
 * works once; the API says why when it no longer does.
 */
export function AcceptInvite({ token, onMember }: { token: string; onMember: (session: Schemas['TeamSession']) => void }) {
  const [password, setPassword] = useState('');
  // The token leaves the address bar (and the history) as soon as the page has it: the submit uses
  // this copy, so a refused or abandoned accept does not leave a live invite on the screen or in the history.
  // A layout effect runs in the same task as the render that shows the page, so no moment exists in
  // which the form is on screen and the token still in the address bar (an effect would run after paint).
  useLayoutEffect(() => {
    window.history.replaceState(null, '', `${window.location.pathname}${window.location.search}#/accept-invite`);
  }, []);
  const [error, setError] = useState<unknown>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    try {
      onMember(await ok(createApiClient({}).POST('/api/v1/team/invites/accept', { body: { token, password } })));
    } catch (failed) {
      setError(failed);
    }
  };
  return (
    <main class="sign-in">
      <h1>Join the program's team</h1>
      <form onSubmit={submit}>
        <p>Choose the password you will sign in with: at least 12 characters.</p>
        <Field
          id="accept-password"
          label="New password"
          type="password"
          autocomplete="new-password"
          param="password"
          error={error}
          value={password}
          onValue={setPassword}
        />
        <button type="submit">Accept the invite</button>
        <FormError error={error} params={['password']} />
      </form>
    </main>
  );
}
