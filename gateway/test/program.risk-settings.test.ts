import request from 'supertest';
import type { RunningGateway } from '../src/gateway';
import { bearer, createProgramWithKey, startGateway } from './support';

// PUT /api/v1/program is the gateway's own (the program lives in its database): no upstream is needed.
let gateway: RunningGateway;
beforeAll(async () => {
  gateway = await startGateway({ keyCacheTtlMs: 0 });
});
afterAll(() => gateway.stop());

test('PUT /api/v1/program with bad risk settings (an unknown action, an unknown signal, a negative limit or minimum) is a 400 naming the field, and changes nothing, the valid fields sent beside it included', async () => {
  const { key } = await createProgramWithKey(gateway);
  const program = () => request(gateway.url).get('/api/v1/program').set(bearer(key)).expect(200);
  await request(gateway.url)
    .put('/api/v1/program')
    .set(bearer(key))
    .send({ riskActions: { SELF_REFERRAL: 'HOLD' }, maxAutoApprovedCommission: 100, minClickToConversionSeconds: 30 })
    .expect(200);
  const before = (await program()).body;
  expect(before).toMatchObject({
    riskActions: { SELF_REFERRAL: 'HOLD', DISPOSABLE_EMAIL: 'FLAG' },
    maxAutoApprovedCommission: 100,
    minClickToConversionSeconds: 30,
  });

  const bad: [Record<string, unknown>, RegExp][] = [
    [{ riskActions: { SELF_REFERRAL: 'BLOCK' } }, /riskActions\.SELF_REFERRAL/],
    [{ riskActions: { NOT_A_SIGNAL: 'HOLD' } }, /NOT_A_SIGNAL/],
    [{ maxAutoApprovedCommission: -1 }, /maxAutoApprovedCommission/],
    [{ minClickToConversionSeconds: -5 }, /minClickToConversionSeconds/],
    [
      { maxAutoApprovedCommission: 200, riskActions: { SELF_REFERRAL: 'VOID', COOKIE_STUFFING: 'SOMETIMES' } },
      /riskActions\.COOKIE_STUFFING/,
    ],
  ];
  for (const [body, named] of bad) {
    const refused = await request(gateway.url).put('/api/v1/program').set(bearer(key)).send(body);
    expect({ body, status: refused.status }).toEqual({ body, status: 400 });
    expect(refused.body.error).toMatch(named);
  }
  expect((await program()).body).toEqual(before);
});
