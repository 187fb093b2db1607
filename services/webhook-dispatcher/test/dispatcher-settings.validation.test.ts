import { parseConfig } from '@affiliate/platform';
import { dispatcherConfigShape, dispatcherSettings } from '../src/config';

test("without settings the production schedule, 15 s timeout (5 s for a test send, under the gateway's 10 s) and 5-day disabling apply, and private URLs are refused", () => {
  const settings = dispatcherSettings(parseConfig(dispatcherConfigShape, {}));
  expect(settings.retryScheduleMs).toEqual([
    0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000, 72_000_000, 86_400_000,
  ]);
  expect(settings.timeoutMs).toBe(15_000);
  expect(settings.testTimeoutMs).toBe(5_000);
  expect(settings.disableAfterMs).toBe(5 * 86_400_000);
  expect(settings.secretOverlapMs).toBe(86_400_000);
  expect(settings.allowPrivateUrls).toBe(false);
});

test('the retry schedule is configurable with durations', () => {
  const settings = dispatcherSettings(
    parseConfig(dispatcherConfigShape, { WEBHOOK_RETRY_SCHEDULE: '0,200ms,1.5s,2m', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' }),
  );
  expect(settings.retryScheduleMs).toEqual([0, 200, 1500, 120_000]);
  expect(settings.allowPrivateUrls).toBe(true);
});

test('a bad setting is refused with a message naming the variable', () => {
  expect(() => parseConfig(dispatcherConfigShape, { WEBHOOK_RETRY_SCHEDULE: '0,soon' })).toThrow(/WEBHOOK_RETRY_SCHEDULE/);
  expect(() => parseConfig(dispatcherConfigShape, { WEBHOOK_TIMEOUT_MS: 'forever' })).toThrow(/WEBHOOK_TIMEOUT_MS/);
  expect(() => parseConfig(dispatcherConfigShape, { WEBHOOK_ALLOW_PRIVATE_URLS: 'yes' })).toThrow(/WEBHOOK_ALLOW_PRIVATE_URLS/);
  expect(() => parseConfig(dispatcherConfigShape, { WEBHOOK_DISABLE_AFTER: '5 days' })).toThrow(/WEBHOOK_DISABLE_AFTER/);
});

test('events are kept EVENT_RETENTION_DAYS (30 by default, 1 to 365) and swept every EVENT_SWEEP_INTERVAL (an hour by default); other values are refused naming the setting', () => {
  const defaults = dispatcherSettings(parseConfig(dispatcherConfigShape, {}));
  expect(defaults.eventRetentionMs).toBe(30 * 86_400_000);
  expect(defaults.eventSweepIntervalMs).toBe(3_600_000);
  const set = dispatcherSettings(parseConfig(dispatcherConfigShape, { EVENT_RETENTION_DAYS: '7', EVENT_SWEEP_INTERVAL: '5m' }));
  expect(set.eventRetentionMs).toBe(7 * 86_400_000);
  expect(set.eventSweepIntervalMs).toBe(300_000);
  for (const bad of ['0', '366', 'a month'])
    expect(() => parseConfig(dispatcherConfigShape, { EVENT_RETENTION_DAYS: bad })).toThrow(/EVENT_RETENTION_DAYS/);
  expect(() => parseConfig(dispatcherConfigShape, { EVENT_SWEEP_INTERVAL: 'hourly' })).toThrow(/EVENT_SWEEP_INTERVAL/);
});
