import { randomUUID } from 'node:crypto';
import type { LoadResult } from '../lib/http-load';
import { asLoadResult, closedLoop, type Answer } from '../lib/paced-load';
import { round } from '../lib/stats';
import { withPeakMemory, type ScenarioContext } from './context';

/** What the issue asks of click intake with identity and deduplication on. */
export const CLICK_TARGET_PER_SECOND = 2_000;

export type ClickIntake = {
  request: string;
  connections: number;
  run: LoadResult;
  clicksPerSecond: number;
  /** The same load of `{link}` bodies (no identity, no deduplication) in the same run, and the ratio. */
  plain: { run: LoadResult; clicksPerSecond: number };
  identityOverPlain: number;
  /** Answers with counted: true (warm-up and measured) against the link's clicks afterwards. */
  counters: { ok200: number; counted: number; duplicates: number; linkClicks: number; match: boolean };
};

const BROWSER = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

/**
 * POST /clicks through the gateway as the tracking script sends them: a visitor id, the browser's
 * user agent and address, the default hour of deduplication. Each visitor clicks twice in a row, so
 * half the answers are duplicates (the claim path) and half are counted (the full write path).
 * Then the same load of plain `{link}` clicks, for the cost of identity and deduplication in this
 * run. Afterwards the link's clicks must equal the answers that said counted: no lost or double counts.
 */
export async function clickIntake(context: ScenarioContext) {
  const { bench, plan } = context;
  const program = await bench.createProgram();
  const tag = randomUUID().slice(0, 8);
  const link = `bench-clicks-${tag}`;
  await program.api.expectOk('POST', '/affiliates', {
    firstName: 'Click',
    lastName: 'Bench',
    email: `clicks-${tag}@example.com`,
    affiliateLink: link,
  });

  let sequence = 0;
  let counted = 0;
  let duplicates = 0;
  const click = async (): Promise<Answer> => {
    const visitor = Math.floor(sequence++ / 2);
    const answer = await program.api.send('POST', '/clicks', {
      link,
      visitorId: `visitor-${tag}-${visitor}`,
      userAgent: BROWSER,
      ipAddress: `10.${(visitor >> 16) & 255}.${(visitor >> 8) & 255}.${visitor & 255}`,
    });
    if (answer.status === 200) {
      const { counted: wasCounted } = JSON.parse(answer.body) as { counted: boolean };
      if (wasCounted) counted++;
      else duplicates++;
    }
    return answer;
  };
  const load = (seconds: number) => closedLoop({ connections: plan.clicks.connections, seconds, send: click });
  return withPeakMemory(context, async () => {
    context.log(`  warm-up ${plan.clicks.warmupSeconds} s, then ${plan.clicks.seconds} s at ${plan.clicks.connections} connections`);
    const warmup = await load(plan.clicks.warmupSeconds);
    const run = asLoadResult(await load(plan.clicks.seconds));
    const ok200 = (warmup.statusCodes['200'] ?? 0) + (run.statusCodes['200'] ?? 0);
    const plainRun = asLoadResult(
      await closedLoop({
        connections: plan.clicks.connections,
        seconds: plan.clicks.seconds,
        send: () => program.api.send('POST', '/clicks', { link }),
      }),
    );
    const plainPerSecond = round((plainRun.statusCodes['200'] ?? 0) / plainRun.seconds, 1);
    // The link's count is read from the clicks stored by the requests themselves: final once they are answered.
    const [stats] = await program.api.expectOk<{ clicks: number }[]>('GET', `/links?link=${link}`);
    // Every plain click counts: the link holds the counted identified clicks plus the plain 200s.
    const linkClicks = (stats?.clicks ?? -1) - (plainRun.statusCodes['200'] ?? 0);
    const result: ClickIntake = {
      request: 'POST /api/v1/clicks {link, visitorId, userAgent, ipAddress}, each visitor twice',
      connections: plan.clicks.connections,
      run,
      clicksPerSecond: round((run.statusCodes['200'] ?? 0) / run.seconds, 1),
      plain: { run: plainRun, clicksPerSecond: plainPerSecond },
      identityOverPlain: 0,
      counters: { ok200, counted, duplicates, linkClicks, match: linkClicks === counted },
    };
    result.identityOverPlain = plainPerSecond > 0 ? round(result.clicksPerSecond / plainPerSecond, 3) : 0;
    context.log(
      `    ${result.clicksPerSecond} clicks/s (plain {link}: ${plainPerSecond}/s, ratio ${result.identityOverPlain}) (target ${CLICK_TARGET_PER_SECOND}/s), p99 ${run.latencyMs.p99} ms, errors ${run.errors}, non-2xx ${run.non2xx}; counters ${JSON.stringify(result.counters)}`,
    );
    return result;
  });
}
