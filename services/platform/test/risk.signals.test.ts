import { riskSettingsOf } from '@affiliate/contracts';
import { assessRisk, normalizedEmail } from '../src/risk';

// The rules of the risk signals without a database: what the referral and sale services apply to what they know.
const settings = riskSettingsOf({ maxAutoApprovedCommission: 100, minClickToConversionSeconds: 30 });

test('normalized emails: case, +tags and Gmail dots (googlemail.com too) are one address; dots elsewhere are kept', () => {
  expect(normalizedEmail(' Ada.Byron+shop@GoogleMail.com ')).toBe('adabyron@gmail.com');
  expect(normalizedEmail('ada.byron+x@example.com')).toBe('ada.byron@example.com');
});

test('a fact left out raises no signal; each threshold is strict (at the limit is not over it, at the minimum is not under it)', () => {
  expect(assessRisk(settings, {})).toEqual({ signals: [], action: 'NONE' });
  expect(
    assessRisk(settings, { commission: { amount: 100, currency: 'USD' }, clickAgeSeconds: 30, visitorAffiliatesWithinHour: 2 }),
  ).toEqual({ signals: [], action: 'NONE' });
  const risky = assessRisk(settings, {
    commission: { amount: 100.01, currency: 'USD' },
    clickAgeSeconds: 29,
    visitorAffiliatesWithinHour: 3,
  });
  expect(risky.signals.map((signal) => signal.type)).toEqual(['FAST_CONVERSION', 'COOKIE_STUFFING', 'OVER_AUTO_APPROVAL_LIMIT']);
});

test("OVER_AUTO_APPROVAL_LIMIT applies the limit in the program's reportingCurrency only: a JPY commission of 600 with a limit of 500 is not flagged when reportingCurrency is USD; a USD one is", () => {
  const usdLimit = { ...riskSettingsOf({ maxAutoApprovedCommission: 500 }), reportingCurrency: 'USD' };
  expect(assessRisk(usdLimit, { commission: { amount: 600, currency: 'JPY' } })).toEqual({ signals: [], action: 'NONE' });
  expect(assessRisk(usdLimit, { commission: { amount: 600, currency: 'USD' } }).signals).toEqual([
    { type: 'OVER_AUTO_APPROVAL_LIMIT', detail: "the commission of 600 USD is above the program's limit of 500 USD" },
  ]);
  const jpyLimit = { ...usdLimit, reportingCurrency: 'JPY' };
  expect(assessRisk(jpyLimit, { commission: { amount: 600, currency: 'JPY' } }).signals.map((signal) => signal.type)).toEqual([
    'OVER_AUTO_APPROVAL_LIMIT',
  ]);
  expect(assessRisk(jpyLimit, { commission: { amount: 600, currency: 'USD' } }).signals).toEqual([]);
});

test('the action is the strongest of the signals (VOID over HOLD over FLAG), and an OFF signal is neither shown nor counted', () => {
  const facts = { customerEmail: 'ada@mailinator.com', affiliateEmail: 'ADA@mailinator.com' };
  expect(assessRisk(riskSettingsOf({ riskActions: { SELF_REFERRAL: 'HOLD' } }), facts).action).toBe('HOLD');
  expect(assessRisk(riskSettingsOf({ riskActions: { SELF_REFERRAL: 'HOLD', DISPOSABLE_EMAIL: 'VOID' } }), facts).action).toBe('VOID');
  expect(assessRisk(riskSettingsOf({ riskActions: { SELF_REFERRAL: 'OFF', DISPOSABLE_EMAIL: 'OFF' } }), facts)).toEqual({
    signals: [],
    action: 'NONE',
  });
});

test("an inherited signal (a sale's referral's) is kept once, and dropped when the program turned it OFF since", () => {
  const inherited = [{ type: 'COOKIE_STUFFING' as const, detail: 'from the referral' }];
  expect(assessRisk(settings, { inherited, visitorAffiliatesWithinHour: 4 }).signals).toEqual([
    { type: 'COOKIE_STUFFING', detail: 'the visitor clicked the links of 4 affiliates within an hour' },
  ]);
  expect(assessRisk(riskSettingsOf({ riskActions: { COOKIE_STUFFING: 'OFF' } }), { inherited }).signals).toEqual([]);
});
