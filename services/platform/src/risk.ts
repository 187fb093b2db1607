import type { Risk, RiskSettings, RiskSignal, RiskSignalType } from '@affiliate/contracts';
import { isDisposableEmail } from 'disposable-email-domains-js';

/** Gmail ignores dots in the local part and treats googlemail.com as gmail.com. */
const GMAIL_DOMAINS = new Set(['gmail.com', 'googlemail.com']);

/**
 * One address however it is written: lower case, without a `+tag`, and for Gmail without dots,
 * so `Ada.Byron+shop@GoogleMail.com` is `adabyron@gmail.com`.
 */
export function normalizedEmail(email: string): string {
  const trimmed = email.trim().toLowerCase();
  const at = trimmed.lastIndexOf('@');
  if (at < 0) return trimmed;
  let local = trimmed.slice(0, at).split('+')[0] ?? '';
  let domain = trimmed.slice(at + 1);
  if (GMAIL_DOMAINS.has(domain)) {
    local = local.replaceAll('.', '');
    domain = 'gmail.com';
  }
  return `${local}@${domain}`;
}

/**
 * The keys naming a customer in `customer_claims` (CUSTOMER_OF_ANOTHER_AFFILIATE), the same in the
 * referral and the sale service: the normalized email, and the id in the program's own system (a
 * referral's referredUserExternalId, a sale's customerId).
 */
export const customerKeysOf = (customer: { email?: string | null; customerId?: string | null }): string[] => [
  ...(customer.email ? [`email:${normalizedEmail(customer.email)}`] : []),
  ...(customer.customerId ? [`customer:${customer.customerId}`] : []),
];

/**
 * What is known of a referral or sale when it is made; a fact left out (null or absent) raises no
 * signal. `otherAffiliate` is the finding of CUSTOMER_OF_ANOTHER_AFFILIATE, made by the service
 * that holds the customers (its detail).
 */
export type RiskFacts = {
  customerEmail?: string | null;
  affiliateEmail?: string | null;
  otherAffiliate?: string | null;
  clickAgeSeconds?: number | null;
  visitorAffiliatesWithinHour?: number | null;
  commission?: { amount: number; currency: string } | null;
  /** Signals found earlier on what this comes through (a sale's referral): kept unless found again or OFF now. */
  inherited?: RiskSignal[];
};

/** COOKIE_STUFFING: this many affiliates' links clicked by one visitor within an hour. */
export const COOKIE_STUFFING_AFFILIATES = 3;

const STRENGTH = { NONE: 0, FLAG: 1, HOLD: 2, VOID: 3 } as const;

function signalsOf(settings: RiskSettings, facts: RiskFacts): RiskSignal[] {
  const found: [RiskSignalType, string | null][] = [];
  const { customerEmail, affiliateEmail } = facts;
  if (customerEmail && affiliateEmail && normalizedEmail(customerEmail) === normalizedEmail(affiliateEmail)) {
    found.push(['SELF_REFERRAL', `the customer's email ${customerEmail} is the affiliate's own (${affiliateEmail})`]);
  }
  if (facts.otherAffiliate) found.push(['CUSTOMER_OF_ANOTHER_AFFILIATE', facts.otherAffiliate]);
  const minimum = settings.minClickToConversionSeconds;
  if (minimum !== null && facts.clickAgeSeconds != null && facts.clickAgeSeconds < minimum) {
    found.push(['FAST_CONVERSION', `converted ${facts.clickAgeSeconds} s after the click; the program's minimum is ${minimum} s`]);
  }
  if (customerEmail && isDisposableEmail(customerEmail.trim().toLowerCase())) {
    found.push(['DISPOSABLE_EMAIL', `${customerEmail.split('@').pop() ?? ''} is a disposable email domain`]);
  }
  const affiliates = facts.visitorAffiliatesWithinHour ?? 0;
  if (affiliates >= COOKIE_STUFFING_AFFILIATES) {
    found.push(['COOKIE_STUFFING', `the visitor clicked the links of ${affiliates} affiliates within an hour`]);
  }
  // The limit is in the program's reportingCurrency; a commission in another currency is not compared (nothing is converted).
  const limit = settings.maxAutoApprovedCommission;
  const limitCurrency = settings.reportingCurrency ?? 'USD';
  if (limit !== null && facts.commission && facts.commission.currency === limitCurrency && facts.commission.amount > limit) {
    found.push([
      'OVER_AUTO_APPROVAL_LIMIT',
      `the commission of ${facts.commission.amount} ${facts.commission.currency} is above the program's limit of ${limit} ${limitCurrency}`,
    ]);
  }
  const signals = found.map(([type, detail]) => ({ type, detail: detail ?? type }));
  const inherited = (facts.inherited ?? []).filter((signal) => !signals.some((seen) => seen.type === signal.type));
  return [...signals, ...inherited].filter((signal) => settings.riskActions[signal.type] !== 'OFF');
}

/** The signals the facts raise under the program's settings (OFF ones are not looked for) and the strongest action among them. */
export function assessRisk(settings: RiskSettings, facts: RiskFacts): Risk {
  const signals = signalsOf(settings, facts);
  let action: Risk['action'] = 'NONE';
  for (const signal of signals) {
    const next = settings.riskActions[signal.type];
    if (next !== 'OFF' && STRENGTH[next] > STRENGTH[action]) action = next;
  }
  return { signals, action };
}
