import { TickAndNudge, Turns, type Turn } from '@affiliate/platform';
import { eventually } from '@affiliate/platform/testing';

type Piece = string;

/** A worker whose pieces the test ends by hand, recording every batch whose turn came, in order. */
function heldTurns(options: {
  concurrency: number;
  perProgram?: number;
  perLane?: number;
  batch?: number;
  maxBatches?: number;
  report?: (running: number, queued: number) => void;
}) {
  const started: Turn<Piece>[][] = [];
  const turns = new Turns<Piece>({ ...options, onTurn: (batch) => started.push(batch) });
  const items = () => started.flat().map((turn) => turn.item);
  const finish = (item: Piece) => {
    const turn = started.flat().find((each) => each.item === item);
    if (!turn) throw new Error(`${item} has not had its turn`);
    turns.done(turn);
  };
  return { turns, started, items, finish };
}

test('a piece starts at once while there is room, and no more than the concurrency run at once', () => {
  const { turns, items, finish } = heldTurns({ concurrency: 2 });
  turns.add('A', 'a1');
  turns.add('B', 'b1');
  turns.add('C', 'c1');
  expect(items()).toEqual(['a1', 'b1']);
  expect(turns.waitingCount).toBe(1);
  finish('a1');
  expect(items()).toEqual(['a1', 'b1', 'c1']);
  expect(turns.runningCount).toBe(2);
});

test("waiting pieces are taken one program at a time, so one program's burst does not hold back another's piece", () => {
  const { turns, items, finish } = heldTurns({ concurrency: 1 });
  turns.add('A', 'a0');
  for (const item of ['a1', 'a2', 'a3']) turns.add('A', item);
  turns.add('B', 'b1');
  turns.add('C', 'c1');
  for (const item of ['a0', 'a1', 'b1', 'c1', 'a2']) finish(item);
  expect(items()).toEqual(['a0', 'a1', 'b1', 'c1', 'a2', 'a3']);
});

test("a program running its share waits even when there is room, and its waiting work does not block another program's", () => {
  const { turns, items, finish } = heldTurns({ concurrency: 3, perProgram: 1 });
  turns.add('A', 'a1');
  turns.add('A', 'a2');
  turns.add('B', 'b1');
  expect(items()).toEqual(['a1', 'b1']);
  expect(turns.waitingOf('A')).toBe(1);
  finish('a1');
  expect(items()).toEqual(['a1', 'b1', 'a2']);
});

test("a lane at its bound is skipped, and the program's other lanes go in its turn", () => {
  const { turns, items, finish } = heldTurns({ concurrency: 10, perLane: 1 });
  turns.add('A', 'slow-1', { lane: 'slow endpoint' });
  turns.add('A', 'slow-2', { lane: 'slow endpoint' });
  turns.add('A', 'fast-1', { lane: 'fast endpoint' });
  turns.add('A', 'fast-2', { lane: 'fast endpoint' });
  expect(items()).toEqual(['slow-1', 'fast-1']);
  finish('fast-1');
  expect(items()).toEqual(['slow-1', 'fast-1', 'fast-2']);
  finish('slow-1');
  expect(items()).toEqual(['slow-1', 'fast-1', 'fast-2', 'slow-2']);
});

test('a piece added under a key that waits takes its place instead of queueing twice, and the key is known until done', () => {
  const { turns, items, finish } = heldTurns({ concurrency: 1 });
  turns.add('A', 'first', { key: 'busy' });
  turns.add('A', 'old', { key: 'document' });
  turns.add('B', 'other');
  turns.add('A', 'new', { key: 'document' });
  expect(turns.waitingCount).toBe(2);
  expect(turns.has('document')).toBe(true);
  expect(turns.isRunning('document')).toBe(false);
  finish('first');
  expect(turns.isRunning('document')).toBe(true);
  finish('new');
  finish('other');
  expect(items()).toEqual(['first', 'new', 'other']);
  expect(turns.has('document')).toBe(false);
});

test('pieces waiting together go as one batch, still one program at a time, and the next batch gathers while the bound is reached', () => {
  const { turns, started, finish } = heldTurns({ concurrency: 8, batch: 3, maxBatches: 1 });
  turns.add('A', 'a1');
  for (const [program, item] of [
    ['A', 'a2'],
    ['A', 'a3'],
    ['A', 'a4'],
    ['B', 'b1'],
    ['C', 'c1'],
  ] as const)
    turns.add(program, item);
  expect(started.map((batch) => batch.map((turn) => turn.item))).toEqual([['a1']]);
  finish('a1');
  expect(started.map((batch) => batch.map((turn) => turn.item))).toEqual([['a1'], ['a2', 'b1', 'c1']]);
  finish('a2');
  finish('b1');
  expect(started).toHaveLength(2);
  finish('c1');
  expect(started.map((batch) => batch.map((turn) => turn.item))).toEqual([['a1'], ['a2', 'b1', 'c1'], ['a3', 'a4']]);
});

test('a waiting piece can leave its place, and one whose turn came cannot', () => {
  const { turns, items, finish } = heldTurns({ concurrency: 1 });
  const running = turns.add('A', 'a1');
  const waiting = turns.add('B', 'b1');
  turns.add('C', 'c1');
  expect(running.leave()).toBe(false);
  expect(waiting.leave()).toBe(true);
  expect(turns.waitingOf('B')).toBe(0);
  finish('a1');
  expect(items()).toEqual(['a1', 'c1']);
});

test('whenIdle resolves once nothing waits or runs', async () => {
  const { turns, finish } = heldTurns({ concurrency: 1 });
  turns.add('A', 'a1');
  turns.add('A', 'a2');
  let idle = false;
  void turns.whenIdle().then(() => (idle = true));
  finish('a1');
  await Promise.resolve();
  expect(idle).toBe(false);
  finish('a2');
  await eventually(() => expect(idle).toBe(true));
});

test('looks never overlap: a nudge while one runs is dropped, the ticks look again, and stop waits for the look in flight', async () => {
  let looks = 0;
  const unfinished: (() => void)[] = [];
  const finishLooks = () => unfinished.splice(0).forEach((finish) => finish());
  const loop = new TickAndNudge({
    everyMs: 20,
    look: () => {
      looks += 1;
      return new Promise<void>((resolve) => unfinished.push(resolve));
    },
  });
  loop.start();
  expect(looks).toBe(1);
  loop.nudge();
  loop.nudge();
  expect(looks).toBe(1);
  finishLooks();
  await eventually(() => expect(looks).toBeGreaterThanOrEqual(2));
  // Each look lasts until the test finishes it, so the one the ticks started is still in flight.
  expect(unfinished).toHaveLength(1);
  let stopDone = false;
  const stopped = loop.stop().then(() => (stopDone = true));
  await new Promise((resolve) => setImmediate(resolve));
  expect(stopDone).toBe(false);
  finishLooks();
  await stopped;
  expect(stopDone).toBe(true);
  expect(loop.isStopped).toBe(true);
});

test('clear forgets every waiting piece at once, while the running ones still end with done; idle comes once they have', async () => {
  const { turns, items, finish } = heldTurns({ concurrency: 1 });
  turns.add('A', 'a1', { key: 'a1' });
  turns.add('A', 'a2', { key: 'a2' });
  turns.add('B', 'b1');
  let idle = false;
  void turns.whenIdle().then(() => (idle = true));
  turns.clear();
  expect(turns.waitingCount).toBe(0);
  expect(turns.waitingPerProgram()).toEqual(new Map());
  expect(turns.has('a2')).toBe(false);
  expect(turns.isRunning('a1')).toBe(true);
  expect(turns.runningCount).toBe(1);
  await Promise.resolve();
  expect(idle).toBe(false);
  finish('a1');
  // Nothing that waited before the clear starts afterwards.
  expect(items()).toEqual(['a1']);
  await eventually(() => expect(idle).toBe(true));
  turns.add('B', 'b2');
  expect(items()).toEqual(['a1', 'b2']);
});

test('waitingPerProgram tells what each program has waiting, leaving out programs with nothing waiting, and is a copy', () => {
  const { turns, finish } = heldTurns({ concurrency: 1 });
  turns.add('A', 'a1');
  turns.add('B', 'b1');
  turns.add('A', 'a2');
  turns.add('A', 'a3');
  expect(turns.waitingPerProgram()).toEqual(
    new Map([
      ['A', 2],
      ['B', 1],
    ]),
  );
  const seen = turns.waitingPerProgram();
  seen.set('A', 100);
  expect(turns.waitingOf('A')).toBe(2);
  finish('a1');
  // B's turn came: it no longer waits, so it is not named.
  expect(turns.waitingPerProgram()).toEqual(new Map([['A', 2]]));
});

test('report is told the running and waiting counts after every change: add, start, done, leave and clear', () => {
  const reported: [number, number][] = [];
  const { turns, finish } = heldTurns({ concurrency: 1, report: (running, queued) => reported.push([running, queued]) });
  const last = () => reported[reported.length - 1];
  turns.add('A', 'a1');
  expect(last()).toEqual([1, 0]);
  turns.add('A', 'a2');
  const leaving = turns.add('B', 'b1');
  expect(last()).toEqual([1, 2]);
  leaving.leave();
  expect(last()).toEqual([1, 1]);
  finish('a1');
  expect(last()).toEqual([1, 0]);
  turns.add('C', 'c1');
  expect(last()).toEqual([1, 1]);
  turns.clear();
  expect(last()).toEqual([1, 0]);
  finish('a2');
  expect(last()).toEqual([0, 0]);
  expect(last()).toEqual([turns.runningCount, turns.waitingCount]);
});

test('a piece added under a key that is running queues as a piece of its own; the key counts as running until both are done', () => {
  const { turns, items, finish } = heldTurns({ concurrency: 2 });
  turns.add('A', 'first', { key: 'document' });
  turns.add('A', 'blocker');
  // The key runs and does not wait: the new piece does not replace the running one, it queues.
  turns.add('A', 'second', { key: 'document' });
  expect(turns.waitingCount).toBe(1);
  expect(items()).toEqual(['first', 'blocker']);
  finish('blocker');
  // Its turn comes while the first still runs.
  expect(items()).toEqual(['first', 'blocker', 'second']);
  finish('first');
  expect(turns.isRunning('document')).toBe(true);
  expect(turns.has('document')).toBe(true);
  finish('second');
  expect(turns.isRunning('document')).toBe(false);
  expect(turns.has('document')).toBe(false);
});

test("a piece that leaves its lane lets the lane's next piece start, and keeps its place among all the running until done", () => {
  const { turns, started, items, finish } = heldTurns({ concurrency: 2, perLane: 1 });
  turns.add('A', 'a1', { lane: 'endpoint' });
  turns.add('A', 'a2', { lane: 'endpoint' });
  turns.add('A', 'a3', { lane: 'endpoint' });
  expect(items()).toEqual(['a1']);
  const first = started.flat()[0] as Turn<Piece>;
  turns.leaveLane(first);
  // a1 still runs (2 of the 2 places): a2 took the lane's place; a3 waits for both bounds.
  expect(items()).toEqual(['a1', 'a2']);
  expect(turns.runningCount).toBe(2);
  turns.leaveLane(first);
  finish('a1');
  // a1's end gives back its running place only: the lane is a2's, so a3 waits for it.
  expect(items()).toEqual(['a1', 'a2']);
  finish('a2');
  expect(items()).toEqual(['a1', 'a2', 'a3']);
});

test('a piece that is done, or one that never had its turn, cannot give a lane place back, nor be done twice: the lane keeps its bound', () => {
  const { turns, started, items, finish } = heldTurns({ concurrency: 5, perLane: 1 });
  turns.add('A', 'a1', { lane: 'endpoint' });
  turns.add('A', 'a2', { lane: 'endpoint' });
  turns.add('A', 'a3', { lane: 'endpoint' });
  const first = started.flat()[0] as Turn<Piece>;
  finish('a1');
  expect(items()).toEqual(['a1', 'a2']);
  // a1 is done: leaving its lane now must not make room beside a2.
  turns.leaveLane(first);
  expect(items()).toEqual(['a1', 'a2']);
  turns.leaveLane({ program: 'A', lane: 'endpoint', key: undefined, item: 'a3' });
  expect(items()).toEqual(['a1', 'a2']);
  turns.done(first);
  expect(items()).toEqual(['a1', 'a2']);
  expect(turns.runningCount).toBe(1);
});
