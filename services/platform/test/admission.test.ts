import { bootService, type AdmissionSettings, type RunningService } from '@affiliate/platform';
import { internalHeaders, newProgramId, testServiceSettings } from '@affiliate/platform/testing';
import { Router } from 'express';
import request from 'supertest';

/** A service whose one route holds every request until the test lets it go, recording the order served. */
async function startHeldService(admission: AdmissionSettings) {
  const held: (() => void)[] = [];
  const served: string[] = [];
  const routes = Router();
  routes.get('/held', async (req, res) => {
    await new Promise<void>((resolve) => held.push(resolve));
    served.push(String(req.query.tag));
    res.json({ tag: req.query.tag });
  });
  const service: RunningService = await bootService({ ...testServiceSettings('admission'), admission }, () => ({ routes }));
  const send = (programId: string, tag: string) =>
    request(service.url)
      .get(`/held?tag=${tag}`)
      .set(internalHeaders(programId))
      .then((response) => response);
  /** Lets the held requests go one at a time, each after the previous one's answer. */
  const releaseAll = async () => {
    for (let waited = 0; waited < 200; waited += 1) {
      const next = held.shift();
      if (next) next();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  const heldCount = () => held.length;
  const releaseOne = () => held.shift()?.();
  /** The queue's length as the service reports it on /metrics. */
  const waitingCount = async () =>
    Number(/^http_requests_waiting\{[^}]*\} (\d+)$/m.exec((await request(service.url).get('/metrics')).text)?.[1]);
  return { service, send, releaseAll, releaseOne, served, heldCount, waitingCount };
}

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 5));
}

test('a burst beyond what a service can hold is answered 503 with Retry-After at once, and the rest are served in turn', async () => {
  const { service, send, releaseAll, heldCount, waitingCount } = await startHeldService({
    maxConcurrent: 2,
    maxQueued: 2,
    maxWaitMs: 30_000,
    deadlineMs: 60_000,
  });
  try {
    const programId = newProgramId();
    const running = [send(programId, '0'), send(programId, '1')];
    await until(() => heldCount() === 2);
    const waiting = [send(programId, '2'), send(programId, '3')];
    await until(async () => (await waitingCount()) === 2);
    // Two running, two waiting: more are refused without waiting for anything.
    const refused = await Promise.all([send(programId, '4'), send(programId, '5')]);
    for (const answer of refused) {
      expect(answer.status).toBe(503);
      expect(answer.headers['retry-after']).toBe('1');
      expect(answer.body).toMatchObject({
        error: 'The admission service is busy; retry in a moment',
        code: 'service_busy',
        requestId: answer.headers['x-request-id'],
      });
    }
    await releaseAll();
    expect((await Promise.all([...running, ...waiting])).map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
  } finally {
    await service.stop();
  }
});

test('a request that waits longer than the service allows is answered 503 before any caller would time out', async () => {
  const { service, send, releaseAll, heldCount } = await startHeldService({
    maxConcurrent: 1,
    maxQueued: 10,
    maxWaitMs: 300,
    deadlineMs: 60_000,
  });
  try {
    const programId = newProgramId();
    const first = send(programId, 'first');
    await until(() => heldCount() === 1);
    const waiting = await send(programId, 'second');
    expect(waiting.status).toBe(503);
    expect(waiting.headers['retry-after']).toBe('1');
    await releaseAll();
    expect((await first).status).toBe(200);
  } finally {
    await service.stop();
  }
});

test("waiting requests are taken one program at a time, so one program's burst does not hold back another's request", async () => {
  const { service, send, releaseAll, served, heldCount, waitingCount } = await startHeldService({
    maxConcurrent: 1,
    maxQueued: 100,
    maxWaitMs: 30_000,
    deadlineMs: 60_000,
  });
  try {
    const [noisy, quiet] = [newProgramId(), newProgramId()];
    const answers = [send(noisy, 'noisy-0')];
    await until(() => heldCount() === 1);
    for (let index = 1; index <= 5; index += 1) answers.push(send(noisy, `noisy-${index}`));
    await until(async () => (await waitingCount()) === 5);
    answers.push(send(quiet, 'quiet'));
    await until(async () => (await waitingCount()) === 6);
    await releaseAll();
    expect((await Promise.all(answers)).map((answer) => answer.status)).toEqual(Array(7).fill(200));
    // The quiet program's request went in right after the noisy program's next one, not after all five.
    expect(served[2]).toBe('quiet');
  } finally {
    await service.stop();
  }
});

test('a request whose turn comes too late to finish by the deadline, judged by how long recent requests took, is answered 503 and not run', async () => {
  const { service, send, served, heldCount, releaseOne } = await startHeldService({
    maxConcurrent: 1,
    maxQueued: 10,
    maxWaitMs: 30_000,
    deadlineMs: 1500,
  });
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  try {
    const programId = newProgramId();
    // Requests here take a second once admitted.
    const first = send(programId, 'first');
    await until(() => heldCount() === 1);
    await sleep(1000);
    releaseOne();
    expect((await first).status).toBe(200);

    // The next one waits a second behind another: a second more would end past the deadline.
    const running = send(programId, 'running');
    await until(() => heldCount() === 1);
    const late = send(programId, 'late');
    await sleep(1000);
    releaseOne();
    const answer = await late;
    expect(answer.status).toBe(503);
    expect(answer.headers['retry-after']).toBe('1');
    expect((await running).status).toBe(200);
    expect(served).toEqual(['first', 'running']);
  } finally {
    await service.stop();
  }
});

test("a program over its own running and queued caps is refused 503 with Retry-After while another program's requests are served", async () => {
  const { service, send, releaseAll, heldCount, waitingCount } = await startHeldService({
    maxConcurrent: 4,
    maxQueued: 100,
    maxWaitMs: 30_000,
    deadlineMs: 60_000,
    maxConcurrentPerProgram: 2,
    maxQueuedPerProgram: 2,
  });
  try {
    const [noisy, quiet] = [newProgramId(), newProgramId()];
    // Two run (its running cap, though the service has room for four), two wait (its queued cap).
    const admitted = [send(noisy, 'noisy-0'), send(noisy, 'noisy-1')];
    await until(() => heldCount() === 2);
    admitted.push(send(noisy, 'noisy-2'), send(noisy, 'noisy-3'));
    await until(async () => (await waitingCount()) === 2);
    const refused = await Promise.all([send(noisy, 'noisy-4'), send(noisy, 'noisy-5')]);
    for (const answer of refused) {
      expect(answer.status).toBe(503);
      expect(answer.headers['retry-after']).toBe('1');
      expect(answer.body).toMatchObject({
        error: 'This program has too many requests waiting at the admission service; retry in a moment',
        code: 'service_busy',
        requestId: answer.headers['x-request-id'],
      });
    }
    // The other program is neither refused nor queued behind the noisy one: it runs at once.
    const quietAnswer = send(quiet, 'quiet');
    await until(() => heldCount() === 3);
    await releaseAll();
    expect((await quietAnswer).status).toBe(200);
    expect((await Promise.all(admitted)).map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
  } finally {
    await service.stop();
  }
});
