/**
 * Group commit: requests that arrive while earlier ones are being written share their writes.
 *
 * Each request hands its item to `submit` and waits. Items of one key (a program) are committed
 * together by one call of `commit`, at most `maxBatch` at a time and at most `maxInFlight` calls per
 * key at once. Nothing waits on a timer: an item that finds no commit running is committed on the
 * next turn of the event loop (with whatever arrived in the same turn), and items arriving while
 * commits run gather into the next batch. So an idle system answers as fast as before, and a loaded
 * one writes once per batch instead of once per request.
 *
 * Every item's promise settles only after the `commit` call holding it has finished: a caller
 * answers its client after its writes are stored, never before (a crash loses nothing acknowledged).
 * A `commit` that throws rejects every item of its batch with that error.
 */
export class GroupCommit<Item, Result> {
  private readonly waiting = new Map<string, { item: Item; resolve: (result: Result) => void; reject: (error: unknown) => void }[]>();
  private readonly running = new Map<string, number>();

  constructor(
    private readonly commit: (key: string, items: Item[]) => Promise<Result[]>,
    private readonly options: { maxBatch: number; maxInFlight: number },
  ) {}

  submit(key: string, item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      let queue = this.waiting.get(key);
      if (!queue) this.waiting.set(key, (queue = []));
      queue.push({ item, resolve, reject });
      // On the next turn, so that the requests parsed in this turn join the same batch.
      if (queue.length === 1) setImmediate(() => this.pump(key));
    });
  }

  private pump(key: string): void {
    const queue = this.waiting.get(key);
    while (queue && queue.length > 0 && (this.running.get(key) ?? 0) < this.options.maxInFlight) {
      const batch = queue.splice(0, this.options.maxBatch);
      if (queue.length === 0) this.waiting.delete(key);
      this.running.set(key, (this.running.get(key) ?? 0) + 1);
      void this.run(key, batch);
    }
  }

  private async run(
    key: string,
    batch: { item: Item; resolve: (result: Result) => void; reject: (error: unknown) => void }[],
  ): Promise<void> {
    try {
      const results = await this.commit(
        key,
        batch.map((entry) => entry.item),
      );
      if (results.length !== batch.length) throw new Error(`group commit: ${results.length} results for ${batch.length} items`);
      batch.forEach((entry, index) => entry.resolve(results[index] as Result));
    } catch (error) {
      for (const entry of batch) entry.reject(error);
    } finally {
      const left = (this.running.get(key) ?? 1) - 1;
      if (left === 0) this.running.delete(key);
      else this.running.set(key, left);
      this.pump(key);
    }
  }
}
