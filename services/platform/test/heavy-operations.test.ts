import { bootService, HeavyOperations, type RunningService } from '@affiliate/platform';
import { internalHeaders, newProgramId, testServiceSettings } from '@affiliate/platform/testing';
import { Router } from 'express';
import request from 'supertest';

test("a program's heavy operations beyond its limit are answered 429 with Retry-After while another program's are served", async () => {
  const held: (() => void)[] = [];
  const heavyOperations = new HeavyOperations(2);
  const routes = Router();
  routes.get('/report', heavyOperations.middleware(), async (_req, res) => {
    await new Promise<void>((resolve) => held.push(resolve));
    res.json({ ok: true });
  });
  const service: RunningService = await bootService(testServiceSettings('heavy-operations'), () => ({ routes }));
  const send = (programId: string) =>
    request(service.url)
      .get('/report')
      .set(internalHeaders(programId))
      .then((response) => response);
  const until = async (condition: () => boolean) => {
    while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
  };
  try {
    const [busy, other] = [newProgramId(), newProgramId()];
    const running = [send(busy), send(busy)];
    await until(() => held.length === 2);
    const refused = await send(busy);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('5');
    expect(refused.body.error).toMatch(/heavy operations .* at most 2/);
    // Another program has places of its own.
    const served = send(other);
    await until(() => held.length === 3);
    held.splice(0).forEach((release) => release());
    expect((await Promise.all([...running, served])).map((answer) => answer.status)).toEqual([200, 200, 200]);
    // Finished operations give their places back.
    const again = send(busy);
    await until(() => held.length === 1);
    held.splice(0).forEach((release) => release());
    expect((await again).status).toBe(200);
  } finally {
    await service.stop();
  }
});
