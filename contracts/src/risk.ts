import { DateTime } from './common';
import { z } from './zod';

/** What can look like fraud on a referral or a sale (README, "Fraud review"). */
export const RISK_SIGNAL_TYPES = [
  'SELF_REFERRAL',
  'CUSTOMER_OF_ANOTHER_AFFILIATE',
  'FAST_CONVERSION',
  'DISPOSABLE_EMAIL',
  'COOKIE_STUFFING',
  'OVER_AUTO_APPROVAL_LIMIT',
] as const;
export const RiskSignalType = z.enum(RISK_SIGNAL_TYPES).openapi('RiskSignalType', {
  description:
    "SELF_REFERRAL: the customer's email is the affiliate's (case, Gmail dots and +tags ignored); CUSTOMER_OF_ANOTHER_AFFILIATE: the customer's email or customerId is already another affiliate's referral or sale; FAST_CONVERSION: click to conversion under the program's minClickToConversionSeconds; DISPOSABLE_EMAIL: a disposable email domain; COOKIE_STUFFING: the visitor clicked the links of 3 or more affiliates within an hour; OVER_AUTO_APPROVAL_LIMIT: the commission is above the program's maxAutoApprovedCommission",
});
export type RiskSignalType = z.infer<typeof RiskSignalType>;

/** What a program does with a signal: OFF ignores it, FLAG records it, HOLD holds the commission for review, VOID voids it. */
export const RiskAction = z.enum(['OFF', 'FLAG', 'HOLD', 'VOID']).openapi('RiskAction', {
  description:
    'OFF: not looked for; FLAG: recorded only; HOLD: the commission is HELD until released or voided; VOID: the commission is voided',
});
export type RiskAction = z.infer<typeof RiskAction>;

export const RiskSignal = z
  .object({ type: RiskSignalType, detail: z.string().openapi({ description: 'What was seen, for a reviewer' }) })
  .openapi('RiskSignal', { description: 'One thing that can look like fraud on a referral or a sale' });
export type RiskSignal = z.infer<typeof RiskSignal>;

/** Named on its own: a generated client would name the inline enum RiskAction, which is taken. */
export const RiskVerdict = z.enum(['NONE', 'FLAG', 'HOLD', 'VOID']).openapi('RiskVerdict', {
  description: "The strongest of the signals' actions (VOID over HOLD over FLAG); NONE when there is no signal",
});

/** On every referral and sale: the signals found and the strongest action they led to (NONE without signals). */
export const Risk = z
  .object({
    signals: z.array(RiskSignal).openapi({ description: 'Every signal found; empty: none' }),
    action: RiskVerdict,
  })
  // No description here: the component takes Referral.risk's, its first use (zod-to-openapi), and the other uses say their own.
  .openapi('Risk');
export type Risk = z.infer<typeof Risk>;
export const NO_RISK: Risk = { signals: [], action: 'NONE' };

/** Every signal's action; a program that set none has FLAG everywhere (recorded, nothing held or voided). */
export const RiskActions = z
  .object(Object.fromEntries(RISK_SIGNAL_TYPES.map((type) => [type, RiskAction])) as Record<RiskSignalType, typeof RiskAction>)
  .openapi('RiskActions', { description: 'What each risk signal type (the keys, as RiskSignalType lists them) does to a commission' });
export type RiskActions = z.infer<typeof RiskActions>;

/** PUT /program takes some of them: the signals it leaves out are FLAG. */
export const RiskActionsBody = RiskActions.partial()
  .strict()
  .openapi('RiskActionsBody', { description: 'An action per signal type; a type left out is FLAG' });

export const RISK_DEFAULTS = {
  riskActions: Object.fromEntries(RISK_SIGNAL_TYPES.map((type) => [type, 'FLAG'])) as RiskActions,
  maxAutoApprovedCommission: null as number | null,
  minClickToConversionSeconds: null as number | null,
};

/** A program's risk settings, as the gateway announces them in program.* events and services apply them. */
export const RiskSettings = z.object({
  riskActions: RiskActions,
  maxAutoApprovedCommission: z.number().nullable(),
  minClickToConversionSeconds: z.number().int().nullable(),
  /**
   * The currency maxAutoApprovedCommission is in: the program's reportingCurrency, which the
   * affiliate service adds when it hands the settings over. A commission in another currency is not
   * compared with the limit (nothing is converted). Absent (an older answer): USD, the default.
   */
  reportingCurrency: z.string().optional(),
});
export type RiskSettings = z.infer<typeof RiskSettings>;

/** The settings with the defaults for what a program (or an older event) left out. */
export function riskSettingsOf(source: {
  riskActions?: Partial<RiskActions> | null;
  maxAutoApprovedCommission?: number | null;
  minClickToConversionSeconds?: number | null;
}): RiskSettings {
  return {
    riskActions: { ...RISK_DEFAULTS.riskActions, ...(source.riskActions ?? {}) },
    maxAutoApprovedCommission: source.maxAutoApprovedCommission ?? null,
    minClickToConversionSeconds: source.minClickToConversionSeconds ?? null,
  };
}

/** How a team member's id begins (`mbr_…`): where a decision names a member rather than an API key. */
export const TEAM_MEMBER_ID_PREFIX = 'mbr_';

/** Who decided: an API key, a team member in the console, the program's risk rules at recording, or the reversal of the sale. */
export const DecidedBy = z
  .object({
    kind: z.enum(['API_KEY', 'TEAM_MEMBER', 'RISK_RULES', 'REVERSAL']).openapi({
      description:
        "API_KEY: a reviewer with an API key; TEAM_MEMBER: a team member signed in to the console; RISK_RULES: the program's risk rules when the sale was recorded; REVERSAL: the sale's reversal",
    }),
    keyId: z.string().nullable().openapi({
      description:
        'The API key that decided (kind API_KEY), as the key list and the audit record show it; the member (mbr_…) for TEAM_MEMBER',
    }),
    keyPrefix: z
      .string()
      .nullable()
      .openapi({ description: "That key's first characters; the member's email for TEAM_MEMBER; null for RISK_RULES and REVERSAL" }),
  })
  .openapi('DecidedBy', { description: 'Who decided' });

/** One decision on a commission: when, by whom and why. */
export const CommissionDecision = z
  .object({
    action: z.enum(['HOLD', 'RELEASE', 'VOID']).openapi({ description: 'HOLD: held for review; RELEASE: released; VOID: voided' }),
    at: DateTime.openapi({ description: 'When it was decided' }),
    by: DecidedBy,
    reason: z.string().nullable().openapi({ description: "The reviewer's note or reason; for RISK_RULES the signal types that decided" }),
  })
  .openapi('CommissionDecision', { description: 'One decision on a commission: when, by whom and why' });
export type CommissionDecision = z.infer<typeof CommissionDecision>;
