/**
 * The addresses of one upstream: one URL, or several separated by commas (the replicas of a service
 * where no load balancer stands in front of them). Calls take them in turn; one that could not be
 * reached, or whose replica said it is stopping, is skipped for `skipMs`, then tried again. With every address skipped, they are still
 * taken in turn rather than none: a service that is coming back gets its calls at once.
 */
export class UpstreamTargets {
  readonly urls: string[];
  private readonly skippedUntil: number[];
  private next = 0;

  constructor(
    setting: string,
    private readonly skipMs = DEFAULT_SKIP_MS,
  ) {
    this.urls = upstreamUrls(setting);
    this.skippedUntil = this.urls.map(() => 0);
  }

  /** The next address in turn that is not skipped. */
  pick(): string {
    const now = Date.now();
    const count = this.urls.length;
    const inTurn = Array.from({ length: count }, (_, offset) => (this.next + offset) % count);
    const index = inTurn.find((candidate) => (this.skippedUntil[candidate] ?? 0) <= now) ?? (inTurn[0] as number);
    this.next = index + 1;
    return this.urls[index] as string;
  }

  /** The replica at this address is stopping (it said `Connection: close`): skipped for a while. */
  leaving(url: string): void {
    this.unreachable(url);
  }

  /** The address could not be reached: skipped for a while. */
  unreachable(url: string): void {
    const index = this.urls.indexOf(url);
    if (index >= 0) this.skippedUntil[index] = Date.now() + this.skipMs;
  }

  /** Whether another address than `url` is there to try now. */
  hasOtherThan(url: string): boolean {
    const now = Date.now();
    return this.urls.some((candidate, index) => candidate !== url && (this.skippedUntil[index] ?? 0) <= now);
  }
}

/** How long an address that refused a connection is left out. */
export const DEFAULT_SKIP_MS = 5000;

/** The URLs of an upstream setting: one, or several separated by commas. */
export function upstreamUrls(setting: string): string[] {
  return setting
    .split(',')
    .map((url) => url.trim())
    .filter((url) => url.length > 0);
}
