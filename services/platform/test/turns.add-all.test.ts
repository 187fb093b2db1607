import { Turns, type Turn } from '@affiliate/platform';

test("pieces added together start with the programs in turn: one program's work found first does not take every free place", () => {
  const started: Turn<string>[] = [];
  const turns = new Turns<string>({ concurrency: 3, onTurn: (batch) => started.push(...batch) });
  // As a poll of a schedule finds them, earliest first: program A's retries before B's and C's.
  turns.addAll([
    ...['a1', 'a2', 'a3', 'a4'].map((item) => ({ program: 'A', item, key: item })),
    { program: 'B', item: 'b1', key: 'b1' },
    { program: 'C', item: 'c1', key: 'c1' },
  ]);
  expect(started.map((turn) => turn.item)).toEqual(['a1', 'b1', 'c1']);
  expect(turns.waitingOf('A')).toBe(3);
  // The rest goes in turn as places free up; a key added again while it waits is not queued twice.
  turns.addAll([{ program: 'A', item: 'a2', key: 'a2' }]);
  expect(turns.waitingCount).toBe(3);
  turns.done(started[1] as Turn<string>);
  expect(started.map((turn) => turn.item)).toEqual(['a1', 'b1', 'c1', 'a2']);
});
