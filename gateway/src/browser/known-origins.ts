import type { Logger } from '@affiliate/platform';
import type { ProgramRepository } from '../admin/program-model';

/**
 * Every origin some program allows, refreshed on a timer and after a change on this replica. A CORS
 * preflight carries no key, so it cannot be judged against one program's origins: it is answered
 * for an origin some program allows, and for no other; the real request is then judged against the
 * key's own program.
 */
export class KnownOrigins {
  private origins = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly programs: ProgramRepository,
    private readonly refreshMs: number,
    private readonly logger: Logger,
  ) {}

  has(origin: string): boolean {
    return this.origins.has(origin);
  }

  async refresh(): Promise<void> {
    try {
      this.origins = new Set(await this.programs.allowedOriginsAcrossPrograms());
    } catch (error) {
      // The last known set keeps serving; the next tick tries again.
      this.logger.warn({ err: error }, 'could not refresh the allowed origins of the browser routes');
    }
  }

  start(): void {
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
