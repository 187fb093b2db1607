import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { hashApiKey } from '../src/admin/api-keys';
import { gatewaySettingsFromEnv } from '../src/config';
import type { RunningGateway } from '../src/gateway';
import { memberPassword, memberSession, memberWrite, spawnGateway, startGateway, testGatewaySettings } from './support';

/**
 * BOOTSTRAP_OWNER_EMAIL and BOOTSTRAP_OWNER_PASSWORD: `npm start` leads to a console someone can sign
 * in to, as the demo program's OWNER. Created once, like the demo key: not twice by gateways starting
 * together, not again (nor with a new password) by a restart, not back after the team removed it.
 */
const newBootstrapKey = () => `ak_demo_owner_${randomUUID().replace(/-/g, '')}`;
const newOwner = () => ({ email: `owner-${randomUUID().slice(0, 8)}@example.com`, password: memberPassword() });

const signIn = (gateway: RunningGateway, body: { email: string; password: string }) =>
  request(gateway.url).post('/api/v1/team/session').send(body);
const cookieOf = (headers: Record<string, unknown>) => String((headers['set-cookie'] as string[])[0]).split(';')[0] as string;

async function teamOf(gateway: RunningGateway, cookie: string): Promise<Array<{ id: string; email: string; role: string }>> {
  return (await request(gateway.url).get('/api/v1/team/members').set('cookie', cookie).expect(200)).body.members;
}

async function demoProgramId(gateway: RunningGateway, key: string): Promise<string> {
  return ((await gateway.store.apiKeys.findOne({ keyHash: hashApiKey(key) }).lean()) as { programId: string }).programId;
}

test('a gateway started with BOOTSTRAP_API_KEY and the demo owner lets the owner sign in to the console as OWNER of the demo program', async () => {
  const key = newBootstrapKey();
  const owner = newOwner();
  const gateway = await startGateway({ bootstrapApiKey: key, bootstrapOwner: owner });
  try {
    // The sign-in form's email is compared without regard to case, as for any member.
    const signedIn = await signIn(gateway, { email: owner.email.toUpperCase(), password: owner.password }).expect(200);
    expect(signedIn.body.member).toMatchObject({ email: owner.email, role: 'OWNER' });
    expect(signedIn.body.program).toEqual({ id: await demoProgramId(gateway, key), name: 'Demo program' });
    // The session is the owner's: it sees the team (the owner alone) and may invite the rest.
    const cookie = cookieOf(signedIn.headers);
    expect(await teamOf(gateway, cookie)).toEqual([expect.objectContaining({ email: owner.email, role: 'OWNER' })]);
    const invited = await request(gateway.url)
      .post('/api/v1/team/members')
      .set(memberWrite(gateway, { cookie, csrfToken: signedIn.body.csrfToken }))
      .send({ email: `finance-${randomUUID().slice(0, 8)}@example.com`, role: 'FINANCE' })
      .expect(200);
    expect(invited.body.inviteUrl).toContain('/console/#/accept-invite?token=');
    expect((await signIn(gateway, { email: owner.email, password: `${owner.password}-wrong` })).status).toBe(401);
  } finally {
    await gateway.stop();
  }
});

test('gateways started together, and started again, make one demo owner, who keeps the first password', async () => {
  const key = newBootstrapKey();
  const owner = newOwner();
  const dbName = testGatewaySettings().dbName;
  const boots = await Promise.allSettled(
    Array.from({ length: 3 }, () => startGateway({ dbName, bootstrapApiKey: key, bootstrapOwner: owner })),
  );
  const started = boots.flatMap((boot) => (boot.status === 'fulfilled' ? [boot.value] : []));
  try {
    expect(boots.map((boot) => (boot.status === 'rejected' ? String(boot.reason) : 'up'))).toEqual(['up', 'up', 'up']);
    for (const gateway of started) {
      const cookie = cookieOf((await signIn(gateway, owner).expect(200)).headers);
      expect((await teamOf(gateway, cookie)).map((member) => member.email)).toEqual([owner.email]);
    }
  } finally {
    await Promise.all(started.map((gateway) => gateway.stop()));
  }

  // A restart with another password in the settings changes nothing: the owner may have chosen theirs since.
  const restarted = await startGateway({ dbName, bootstrapApiKey: key, bootstrapOwner: { ...owner, password: memberPassword() } });
  try {
    const cookie = cookieOf((await signIn(restarted, owner).expect(200)).headers);
    expect((await teamOf(restarted, cookie)).map((member) => member.email)).toEqual([owner.email]);
  } finally {
    await restarted.stop();
  }
});

test('a demo owner the team removed does not come back at the next start', async () => {
  const key = newBootstrapKey();
  const owner = newOwner();
  const first = await startGateway({ bootstrapApiKey: key, bootstrapOwner: owner });
  const dbName = first.connection.name;
  try {
    // Another OWNER takes over (the last one cannot be removed) and removes the demo owner.
    const successor = await memberSession(first, await demoProgramId(first, key), 'OWNER');
    const demoOwnerId = (await teamOf(first, successor.cookie)).find((member) => member.email === owner.email)?.id;
    await request(first.url).delete('/api/v1/team/members').set(memberWrite(first, successor)).send({ id: demoOwnerId }).expect(200);
  } finally {
    await first.stop();
  }

  const restarted = await startGateway({ dbName, bootstrapApiKey: key, bootstrapOwner: owner });
  try {
    expect((await signIn(restarted, owner)).status).toBe(401);
  } finally {
    await restarted.stop();
  }
});

test("the demo owner's password is never logged, and the gateway says it created the owner", async () => {
  const owner = newOwner();
  const spawned = await spawnGateway({
    LOG_LEVEL: 'info',
    BOOTSTRAP_API_KEY: newBootstrapKey(),
    BOOTSTRAP_OWNER_EMAIL: owner.email,
    BOOTSTRAP_OWNER_PASSWORD: owner.password,
  });
  try {
    const post = await fetch(`${spawned.url}/api/v1/team/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(owner),
    });
    expect(post.status).toBe(200);
    expect(spawned.output()).toContain("created the demo program's OWNER for BOOTSTRAP_OWNER_EMAIL");
    expect(spawned.output()).not.toContain(owner.password);
  } finally {
    await spawned.stop();
  }
});

describe('the demo owner settings', () => {
  // Generated here: a secret written in the repository would be refused in production (production-secrets.test.ts).
  const secret = () => randomBytes(32).toString('hex');
  const production = () => ({ NODE_ENV: 'production', INTERNAL_TOKEN: secret(), ADMIN_TOKEN: secret(), BOOTSTRAP_API_KEY: secret() });

  test('production refuses the shipped demo password, and takes a generated one', () => {
    const env = { ...production(), BOOTSTRAP_OWNER_EMAIL: 'owner@example.com' };
    expect(() => gatewaySettingsFromEnv({ ...env, BOOTSTRAP_OWNER_PASSWORD: 'local-demo-password-change-me' })).toThrow(
      'BOOTSTRAP_OWNER_PASSWORD: is a shipped default, which is public',
    );
    expect(() => gatewaySettingsFromEnv({ ...env, BOOTSTRAP_OWNER_PASSWORD: 'q7Lr-0aZ-w3Xk-91Pd' })).toThrow(
      'BOOTSTRAP_OWNER_PASSWORD: must be at least 32 characters',
    );
    const password = secret();
    expect(gatewaySettingsFromEnv({ ...env, BOOTSTRAP_OWNER_PASSWORD: password }).bootstrapOwner).toEqual({
      email: 'owner@example.com',
      password,
    });
  });

  test('need each other, the demo key, and the console password rule: each mistake is named at start', () => {
    const key = { BOOTSTRAP_API_KEY: newBootstrapKey() };
    expect(() => gatewaySettingsFromEnv({ ...key, BOOTSTRAP_OWNER_EMAIL: 'owner@example.com' })).toThrow(
      'BOOTSTRAP_OWNER_PASSWORD: required when BOOTSTRAP_OWNER_EMAIL is set',
    );
    expect(() => gatewaySettingsFromEnv({ ...key, BOOTSTRAP_OWNER_PASSWORD: memberPassword() })).toThrow(
      'BOOTSTRAP_OWNER_EMAIL: required when BOOTSTRAP_OWNER_PASSWORD is set',
    );
    expect(() =>
      gatewaySettingsFromEnv({ BOOTSTRAP_OWNER_EMAIL: 'owner@example.com', BOOTSTRAP_OWNER_PASSWORD: memberPassword() }),
    ).toThrow('BOOTSTRAP_OWNER_EMAIL: needs BOOTSTRAP_API_KEY');
    expect(() => gatewaySettingsFromEnv({ ...key, BOOTSTRAP_OWNER_EMAIL: 'owner', BOOTSTRAP_OWNER_PASSWORD: memberPassword() })).toThrow(
      'BOOTSTRAP_OWNER_EMAIL: must be an email address',
    );
    expect(() =>
      gatewaySettingsFromEnv({ ...key, BOOTSTRAP_OWNER_EMAIL: 'owner@example.com', BOOTSTRAP_OWNER_PASSWORD: 'eleven-char' }),
    ).toThrow('BOOTSTRAP_OWNER_PASSWORD: must be at least 12 characters');
    // Unset and empty are the same (compose passes `BOOTSTRAP_OWNER_EMAIL=` through): no owner.
    expect(gatewaySettingsFromEnv({ ...key, BOOTSTRAP_OWNER_EMAIL: '', BOOTSTRAP_OWNER_PASSWORD: '' }).bootstrapOwner).toBeUndefined();
    expect(
      gatewaySettingsFromEnv({ ...key, BOOTSTRAP_OWNER_EMAIL: ' Owner@Example.COM ', BOOTSTRAP_OWNER_PASSWORD: 'a-long-password' })
        .bootstrapOwner,
    ).toEqual({
      email: 'owner@example.com',
      password: 'a-long-password',
    });
  });
});
