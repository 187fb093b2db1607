import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createMetrics, createPayoutMetrics, createWebhookMetrics } from '@affiliate/platform';
import { parse } from 'yaml';

/**
 * The alerting rules and the dashboard in deploy/monitoring (issue 26): promtool checks the rules and
 * runs their unit tests, and every metric they query must be one the components export, read from
 * the platform's metrics catalogue (the registry each component serves), so a renamed metric breaks
 * this test rather than an alert that silently never fires.
 */
const monitoring = join(__dirname, '..', 'monitoring');
const RULES = join(monitoring, 'alerts.rules.yaml');
const RULE_TESTS = join(monitoring, 'alerts.test.yaml');

/** Metrics the rules may query that come from elsewhere in the cluster, each with its source. */
const EXTERNAL_METRICS: Record<string, string> = { kube_pod_status_ready: 'kube-state-metrics' };

function promtool(...args: string[]): string {
  try {
    return execFileSync('promtool', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const failed = error as { code?: string; stdout?: string; stderr?: string };
    if (failed.code === 'ENOENT')
      throw new Error(
        "promtool is not installed: it comes with Debian's prometheus package (apt-get install prometheus; .ci/run installs it)",
      );
    throw new Error(`promtool ${args.join(' ')} failed:\n${failed.stdout ?? ''}${failed.stderr ?? ''}`);
  }
}

/** Every family the components export, and the series names each stands for (a histogram's _bucket, _sum, _count). */
async function exportedSeriesNames(): Promise<{ families: string[]; series: Set<string> }> {
  const metrics = createMetrics('catalogue');
  createWebhookMetrics(metrics.registry);
  createPayoutMetrics(metrics.registry);
  const families = (await metrics.registry.getMetricsAsJSON()).map((metric) => ({ name: metric.name, type: String(metric.type) }));
  const series = new Set<string>();
  for (const { name, type } of families) {
    series.add(name);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) series.add(`${name}${suffix}`);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) series.add(`${name}${suffix}`);
  }
  return { families: families.map((family) => family.name), series };
}

const PROMQL_WORDS = new Set([
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'inf',
  'nan',
]);

/** The metric names a PromQL expression reads: identifiers that are not functions, keywords, labels or durations. */
export function metricNamesIn(expression: string): string[] {
  const bare = expression
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '');
  const names = new Set<string>();
  for (const match of bare.matchAll(/(?<![\w$.])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)) {
    const [, name, call] = match;
    if (call || PROMQL_WORDS.has(name as string)) continue;
    names.add(name as string);
  }
  return [...names];
}

const rules = parse(readFileSync(RULES, 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] };
const alerts = rules.groups.flatMap((group) => group.rules);
const dashboard = JSON.parse(readFileSync(join(monitoring, 'dashboard.json'), 'utf8')) as {
  panels: { title: string; targets?: { expr: string }[] }[];
  templating: { list: { name: string; definition?: string }[] };
};
const dashboardQueries = [
  ...dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ where: `panel "${panel.title}"`, expr: target.expr }))),
  // label_values(metric, label): the metric is the first argument.
  ...dashboard.templating.list
    .filter((variable) => variable.definition)
    .map((variable) => ({ where: `variable ${variable.name}`, expr: variable.definition!.replace(/^label_values\(([^,]+),.*$/, '$1') })),
];

test('promtool check rules accepts the alerting rules', () => {
  expect(promtool('check', 'rules', RULES)).toContain(`SUCCESS: ${alerts.length} rules found`);
});

test('promtool test rules: every alert fires on the series meant to fire it and stays silent on the others', () => {
  expect(promtool('test', 'rules', RULE_TESTS)).toContain('SUCCESS');
  // One unit test at least per alert: an alert nobody tested is an alert nobody knows fires.
  const tested = new Set(
    (parse(readFileSync(RULE_TESTS, 'utf8')) as { tests: { alert_rule_test: { alertname: string }[] }[] }).tests.flatMap((unit) =>
      unit.alert_rule_test.map((check) => check.alertname),
    ),
  );
  expect(alerts.map((alert) => alert.alert).filter((name) => !tested.has(name))).toEqual([]);
});

test('the outbox gauges, which every replica reports for its whole service, are folded with max() and never summed', () => {
  const queries = [...alerts.map((alert) => ({ where: `alert ${alert.alert}`, expr: alert.expr })), ...dashboardQueries];
  const outbox = queries.filter(({ expr }) => /outbox_(documents_pending|oldest_pending_age_seconds)/.test(expr));
  expect(outbox.length).toBeGreaterThanOrEqual(3);
  expect(
    outbox.filter(({ expr }) => !/^max by \(service\) \(outbox_(documents_pending|oldest_pending_age_seconds)\b/.test(expr.trim())),
  ).toEqual([]);
});

test('the webhook backlog gauges, which every dispatcher replica reads from the shared schedule, are never summed', () => {
  const queries = [...alerts.map((alert) => ({ where: `alert ${alert.alert}`, expr: alert.expr })), ...dashboardQueries];
  const backlog = queries.filter(({ expr }) => /webhook_(deliveries_due|oldest_due_age_seconds)/.test(expr));
  expect(backlog.length).toBeGreaterThanOrEqual(4);
  expect(backlog.filter(({ expr }) => /sum[^(]*\([^)]*webhook_(deliveries_due|oldest_due_age_seconds)/.test(expr))).toEqual([]);
});

test('the rules alert on outbox age, backlog growth, dead letters, the error ratio, open circuits and unready pods', () => {
  const watched = alerts.map((alert) => metricNamesIn(alert.expr)).flat();
  expect(watched).toEqual(
    expect.arrayContaining([
      'outbox_oldest_pending_age_seconds',
      'webhook_deliveries_due',
      'webhook_oldest_due_age_seconds',
      'events_dead_lettered_total',
      'http_requests_total',
      'circuit_breakers',
      'kube_pod_status_ready',
    ]),
  );
});

test('every metric the rules and the dashboard query is one the components export (or a named cluster source)', async () => {
  const { series } = await exportedSeriesNames();
  const queries = [...alerts.map((alert) => ({ where: `alert ${alert.alert}`, expr: alert.expr })), ...dashboardQueries];
  const unknown = queries.flatMap(({ where, expr }) =>
    metricNamesIn(expr)
      .filter((name) => !series.has(name) && !(name in EXTERNAL_METRICS))
      .map((name) => `${where}: ${name}`),
  );
  expect(unknown).toEqual([]);
  expect(queries.length).toBeGreaterThan(20);
});

test('the dashboard shows every domain metric the components export', async () => {
  const { families } = await exportedSeriesNames();
  // Node's process metrics (prom-client's defaults) are not domain metrics.
  const defaults = new Set(
    (await createMetrics('defaults').registry.getMetricsAsJSON())
      .map((metric) => metric.name)
      .filter((name) => /^(process_|nodejs_)/.test(name)),
  );
  const shown = new Set(
    dashboardQueries.flatMap(({ expr }) => metricNamesIn(expr)).map((name) => name.replace(/_(bucket|sum|count)$/, '')),
  );
  expect(families.filter((name) => !defaults.has(name) && !shown.has(name))).toEqual([]);
});

test('the PromQL reader finds metric names and nothing else', () => {
  expect(
    metricNamesIn(
      'histogram_quantile(0.99, sum by (service, le) (rate(http_request_duration_seconds_bucket{service=~"$service"}[$__rate_interval])))',
    ),
  ).toEqual(['http_request_duration_seconds_bucket']);
  expect(metricNamesIn('sum(webhook_deliveries_due) > 50 and deriv(sum(webhook_deliveries_due)[10m:1m]) > 0')).toEqual([
    'webhook_deliveries_due',
  ]);
  expect(metricNamesIn('a_total / on (service) group_left b_total')).toEqual(['a_total', 'b_total']);
});
