/**
 * Documents read a moment ago, kept in this process's memory for a short while, per program.
 *
 * For reads that every request of a hot path repeats (the link a click names, its affiliate, the
 * program's settings). What it may serve is bounded in two ways: an entry is at most `ttlMs` old,
 * and this process's own writes drop every entry of their program at once (`forget`), including
 * what a read still in flight at that moment would have stored. Another process's writes are not
 * seen until the entry expires: a replica may act on the older state for up to `ttlMs`.
 *
 * Only found documents are kept: a miss is read again each time, so a document created anywhere is
 * visible at once (caching "not there" would refuse new links on another replica for the TTL).
 */
export class RecentReads<Value> {
  private readonly entries = new Map<string, Map<string, { value: Value; until: number }>>();
  /** Reads in flight, shared by everyone asking for the same key meanwhile. */
  private readonly loading = new Map<string, Promise<Value | null>>();
  /** Bumped by `forget`: a read begun under an older generation must not store its (maybe stale) result. */
  private readonly generations = new Map<string, number>();
  private size = 0;

  constructor(private readonly options: { ttlMs: number; maxEntries: number; now?: () => number }) {}

  async get(programId: string, key: string, read: () => Promise<Value | null>): Promise<Value | null> {
    const now = this.now();
    const kept = this.entries.get(programId)?.get(key);
    if (kept && kept.until > now) return kept.value;
    const loadingKey = `${programId}\n${key}`;
    const inFlight = this.loading.get(loadingKey);
    if (inFlight) return inFlight;
    const generation = this.generations.get(programId) ?? 0;
    const load: Promise<Value | null> = read()
      .then((value) => {
        if (value !== null && (this.generations.get(programId) ?? 0) === generation) this.keep(programId, key, value);
        return value;
      })
      .finally(() => {
        if (this.loading.get(loadingKey) === load) this.loading.delete(loadingKey);
      });
    this.loading.set(loadingKey, load);
    return load;
  }

  /** This process changed something of the program: nothing read before that is served again. */
  forget(programId: string): void {
    this.generations.set(programId, (this.generations.get(programId) ?? 0) + 1);
    for (const loadingKey of [...this.loading.keys()]) if (loadingKey.startsWith(`${programId}\n`)) this.loading.delete(loadingKey);
    const forgotten = this.entries.get(programId);
    if (forgotten) this.size -= forgotten.size;
    this.entries.delete(programId);
  }

  private keep(programId: string, key: string, value: Value): void {
    // Bounded memory: when full, start over (entries are only ever seconds old, so little is lost).
    if (this.size >= this.options.maxEntries) this.clear();
    let ofProgram = this.entries.get(programId);
    if (!ofProgram) this.entries.set(programId, (ofProgram = new Map()));
    if (!ofProgram.has(key)) this.size += 1;
    ofProgram.set(key, { value, until: this.now() + this.options.ttlMs });
  }

  private clear(): void {
    this.entries.clear();
    this.size = 0;
  }

  private now(): number {
    return this.options.now ? this.options.now() : Date.now();
  }
}
