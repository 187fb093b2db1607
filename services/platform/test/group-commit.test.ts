import { GroupCommit } from '@affiliate/platform';

/** A commit the test finishes by hand, recording each batch it was given. */
function heldCommits() {
  const batches: { key: string; items: number[]; finish: () => void; fail: (error: Error) => void }[] = [];
  const commit = (key: string, items: number[]) =>
    new Promise<string[]>((resolve, reject) => {
      batches.push({ key, items, finish: () => resolve(items.map((item) => `${key}:${item}`)), fail: reject });
    });
  return { batches, commit };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));
/** Whether a promise has settled by now. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  await turn();
  return done;
}

test('items submitted in one turn share one commit, and each gets its own result', async () => {
  const { batches, commit } = heldCommits();
  const group = new GroupCommit(commit, { maxBatch: 100, maxInFlight: 1 });
  const answers = [1, 2, 3].map((item) => group.submit('program', item));
  await turn();
  expect(batches.map((batch) => batch.items)).toEqual([[1, 2, 3]]);
  batches[0]?.finish();
  expect(await Promise.all(answers)).toEqual(['program:1', 'program:2', 'program:3']);
});

test('no item is answered before the commit holding it has finished', async () => {
  const { batches, commit } = heldCommits();
  const group = new GroupCommit(commit, { maxBatch: 100, maxInFlight: 1 });
  const answer = group.submit('program', 1);
  await turn();
  expect(await settled(answer)).toBe(false);
  batches[0]?.finish();
  expect(await answer).toBe('program:1');
});

test('items arriving while a commit runs wait and are committed together in the next, at most maxBatch at a time', async () => {
  const { batches, commit } = heldCommits();
  const group = new GroupCommit(commit, { maxBatch: 3, maxInFlight: 1 });
  const first = group.submit('program', 0);
  await turn();
  const waiting = [1, 2, 3, 4, 5].map((item) => group.submit('program', item));
  await turn();
  // One commit at a time per key: the others wait for it.
  expect(batches.map((batch) => batch.items)).toEqual([[0]]);
  batches[0]?.finish();
  await first;
  await turn();
  expect(batches.map((batch) => batch.items)).toEqual([[0], [1, 2, 3]]);
  batches[1]?.finish();
  await Promise.all(waiting.slice(0, 3));
  await turn();
  expect(batches.map((batch) => batch.items)).toEqual([[0], [1, 2, 3], [4, 5]]);
  batches[2]?.finish();
  expect(await Promise.all(waiting)).toEqual(['program:1', 'program:2', 'program:3', 'program:4', 'program:5']);
});

test('keys are committed apart, each with its own commits in flight', async () => {
  const { batches, commit } = heldCommits();
  const group = new GroupCommit(commit, { maxBatch: 100, maxInFlight: 1 });
  const answers = [group.submit('a', 1), group.submit('b', 2), group.submit('a', 3)];
  await turn();
  expect(batches.map((batch) => [batch.key, batch.items])).toEqual([
    ['a', [1, 3]],
    ['b', [2]],
  ]);
  for (const batch of batches) batch.finish();
  expect(await Promise.all(answers)).toEqual(['a:1', 'b:2', 'a:3']);
});

test('up to maxInFlight commits of one key run at once', async () => {
  const { batches, commit } = heldCommits();
  const group = new GroupCommit(commit, { maxBatch: 1, maxInFlight: 2 });
  const answers = [1, 2, 3].map((item) => group.submit('program', item));
  await turn();
  expect(batches.map((batch) => batch.items)).toEqual([[1], [2]]);
  batches[1]?.finish();
  await answers[1];
  await turn();
  expect(batches.map((batch) => batch.items)).toEqual([[1], [2], [3]]);
  batches[0]?.finish();
  batches[2]?.finish();
  expect(await Promise.all(answers)).toEqual(['program:1', 'program:2', 'program:3']);
});

test('a failed commit fails every item of its batch, and the next batch is committed', async () => {
  const { batches, commit } = heldCommits();
  const group = new GroupCommit(commit, { maxBatch: 2, maxInFlight: 1 });
  const failing = [1, 2].map((item) => group.submit('program', item).catch((error: Error) => error.message));
  const next = group.submit('program', 3);
  await turn();
  batches[0]?.fail(new Error('database away'));
  expect(await Promise.all(failing)).toEqual(['database away', 'database away']);
  await turn();
  batches[1]?.finish();
  expect(await next).toBe('program:3');
});
