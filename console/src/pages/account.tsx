import { useState } from 'preact/hooks';
import { ok, type PageProps, type Schemas } from '../client';
import { Field } from '../fields';
import { ErrorBanner, Notice, useLoad, when } from '../ui';
import { FormError } from '../forms';

/**
 * The signed-in member's own account, whatever their role: who they are, and the second factor
 * (TOTP): turning it on shows a secret for the authenticator app (as text and as the otpauth URL),
 * confirmed with a code of the app; turning it off takes a current code.
 */
export function Account({ client }: PageProps) {
  const session = useLoad(() => ok(client.GET('/api/v1/team/session')), []);
  const member = session.value?.member;
  return (
    <section>
      <h1>Your account</h1>
      <ErrorBanner error={session.error} />
      {member && session.value ? (
        <>
          <dl class="facts">
            <dt>Email</dt>
            <dd>{member.email}</dd>
            <dt>Role</dt>
            <dd>{member.role}</dd>
            <dt>Program</dt>
            <dd>{session.value.program.name}</dd>
            <dt>Session ends</dt>
            <dd>{when(session.value.expiresAt)} at the latest</dd>
          </dl>
          <SecondFactor key={String(member.totpEnabled)} client={client} enabled={member.totpEnabled} onChanged={session.reload} />
        </>
      ) : null}
    </section>
  );
}

function SecondFactor({ client, enabled, onChanged }: Pick<PageProps, 'client'> & { enabled: boolean; onChanged: () => void }) {
  const [enrolment, setEnrolment] = useState<Schemas['TotpEnrolment'] | null>(null);
  const [code, setCode] = useState('');
  const [error, setError] = useState<unknown>(null);
  const attempt = (run: () => Promise<unknown>) => async (event: Event) => {
    event.preventDefault();
    setError(null);
    try {
      await run();
    } catch (failed) {
      setError(failed);
    }
  };
  const codeField = (
    <Field
      id="totp-code"
      label="Code of the authenticator app"
      inputMode="numeric"
      autocomplete="one-time-code"
      param="code"
      error={error}
      value={code}
      onValue={setCode}
    />
  );
  if (enabled) {
    return (
      <form
        class="panel"
        aria-labelledby="totp-title"
        onSubmit={attempt(async () => {
          await ok(client.DELETE('/api/v1/team/totp', { body: { code: code.trim() } }));
          onChanged();
        })}
      >
        <h2 id="totp-title">Second factor</h2>
        <Notice>On: signing in asks for a code of your authenticator app.</Notice>
        {codeField}
        <button type="submit" class="danger">
          Turn the second factor off
        </button>
        <FormError error={error} params={['code']} />
      </form>
    );
  }
  return (
    <form
      class="panel"
      aria-labelledby="totp-title"
      onSubmit={attempt(async () => {
        if (!enrolment) return setEnrolment(await ok(client.POST('/api/v1/team/totp')));
        await ok(client.PUT('/api/v1/team/totp', { body: { code: code.trim() } }));
        onChanged();
      })}
    >
      <h2 id="totp-title">Second factor</h2>
      {enrolment ? (
        <>
          <p>Add this account to your authenticator app, then enter the code it shows.</p>
          <dl class="facts">
            <dt>Secret</dt>
            <dd>
              <code class="secret">{enrolment.secret}</code>
            </dd>
            <dt>otpauth URL</dt>
            <dd>
              <code class="secret">{enrolment.otpauthUrl}</code>
            </dd>
          </dl>
          {codeField}
          <button type="submit">Turn the second factor on</button>
        </>
      ) : (
        <>
          <p>Off: signing in asks for your password only.</p>
          <button type="submit">Set up the second factor</button>
        </>
      )}
      <FormError error={error} params={['code']} />
    </form>
  );
}
