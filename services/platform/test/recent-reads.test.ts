import { RecentReads } from '@affiliate/platform';

/** A clock the test moves, and a store whose reads it counts. */
function setUp(ttlMs = 1000) {
  let now = 0;
  const stored = new Map<string, string>();
  let reads = 0;
  const cache = new RecentReads<string>({ ttlMs, maxEntries: 100, now: () => now });
  const read = (key: string) => async () => {
    reads += 1;
    return stored.get(key) ?? null;
  };
  return {
    cache,
    stored,
    read,
    reads: () => reads,
    advance: (ms: number) => (now += ms),
  };
}

test('a document read within the TTL is served from memory; after it, it is read again', async () => {
  const { cache, stored, read, reads, advance } = setUp();
  stored.set('link', 'v1');
  expect(await cache.get('program', 'link', read('link'))).toBe('v1');
  stored.set('link', 'v2'); // another process's write
  advance(999);
  expect(await cache.get('program', 'link', read('link'))).toBe('v1');
  expect(reads()).toBe(1);
  advance(1);
  expect(await cache.get('program', 'link', read('link'))).toBe('v2');
  expect(reads()).toBe(2);
});

test("this process's write of a program forgets what was read of it, and only of it", async () => {
  const { cache, stored, read } = setUp();
  stored.set('link', 'v1');
  stored.set('other', 'o1');
  await cache.get('program', 'link', read('link'));
  await cache.get('another program', 'other', read('other'));
  stored.set('link', 'v2');
  stored.set('other', 'o2');
  cache.forget('program');
  expect(await cache.get('program', 'link', read('link'))).toBe('v2');
  expect(await cache.get('another program', 'other', read('other'))).toBe('o1');
});

test('"not there" is never kept: a document created meanwhile is found at once', async () => {
  const { cache, stored, read } = setUp();
  expect(await cache.get('program', 'link', read('link'))).toBeNull();
  stored.set('link', 'v1');
  expect(await cache.get('program', 'link', read('link'))).toBe('v1');
});

test('simultaneous misses share one read', async () => {
  const { cache, stored, read, reads } = setUp();
  stored.set('link', 'v1');
  expect(await Promise.all([1, 2, 3].map(() => cache.get('program', 'link', read('link'))))).toEqual(['v1', 'v1', 'v1']);
  expect(reads()).toBe(1);
});

test('a read in flight when the program is written is not kept, nor shared with readers after the write', async () => {
  const { cache } = setUp();
  let finishOldRead: (value: string) => void = () => {};
  const oldRead = cache.get('program', 'link', () => new Promise<string>((resolve) => (finishOldRead = resolve)));
  cache.forget('program');
  // A reader after the write reads for itself.
  expect(await cache.get('program', 'link', async () => 'v2')).toBe('v2');
  finishOldRead('v1');
  expect(await oldRead).toBe('v1');
  // What the old read returned was not kept over the newer value.
  expect(await cache.get('program', 'link', async () => 'v3')).toBe('v2');
});
