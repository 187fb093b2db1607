import { randomUUID } from 'node:crypto';
import type { CommissionStatus } from '@affiliate/contracts';

/**
 * The one home of a commission's life. A commission is an entry embedded in its sale: what was
 * earned (or, with `adjusts`, taken back). Every writer (recording, PUT /sales, reversal, payout
 * runs, the review queue) moves it only through the transitions below, each of which returns the
 * next entry or refuses with a typed reason, so the rules of money live in one file and are tested
 * without a database or HTTP.
 *
 * `state` is what happened to it; the public status adds the hold by date (OPEN before `availableAt`
 * is PENDING, after it DUE). HELD is a hold by decision (a risk signal, a reviewer): never paid,
 * whatever its date, until released. Entries stored before plans existed have neither `state` nor
 * `availableAt`: they read as OPEN and available since the sale.
 */
export type CommissionEntry = {
  id: string;
  affiliateId: string;
  amountMinor: number;
  currency: string;
  state?: CommissionState;
  availableAt?: Date;
  commissionPlanId?: string | null;
  adjusts?: string | null;
  payoutCreated: boolean;
  payoutId: string | null;
  /** The decisions taken on it (held, released, voided), oldest first; absent before there was any. */
  decisions?: CommissionDecision[];
  /**
   * Each change of its amount before it was paid out (a partial refund, PUT /sales), oldest first;
   * absent before there was any. `amountMinor` is the amount now; the statement replays these, so
   * that a period already stated keeps what it said (EARNED at the first amount, then ADJUSTED).
   */
  amountChanges?: AmountChange[];
  /**
   * When PUT /sales marked it as rolled into a payout made outside the payout runs (absent otherwise,
   * and on entries marked before it was kept): the statement's PAID_OUT for it, as a run's payout has its own.
   */
  paidOutByHandAt?: Date;
};
export type AmountChange = { at: Date; fromMinor: number; toMinor: number };
export type CommissionState = 'OPEN' | 'HELD' | 'PAID' | 'VOID';

/** Who decided: an API key (its id and prefix, as the key list shows them), the risk rules of the program, or a reversal of the sale. */
export type DecidedBy = { kind: 'API_KEY' | 'TEAM_MEMBER' | 'RISK_RULES' | 'REVERSAL'; keyId: string | null; keyPrefix: string | null };
export const decidedByRules = (kind: 'RISK_RULES' | 'REVERSAL'): DecidedBy => ({ kind, keyId: null, keyPrefix: null });
export type CommissionDecision = { action: 'HOLD' | 'RELEASE' | 'VOID'; at: Date; by: DecidedBy; reason: string | null };

/** Why a transition is refused; the use case turns it into its answer (a 400, or nothing to do). */
export type RefusalReason =
  | 'NOT_OPEN'
  | 'NOT_HELD'
  | 'ALREADY_VOID'
  | 'ALREADY_PAID'
  | 'IN_PAYOUT'
  | 'NOT_IN_THIS_PAYOUT'
  | 'NOT_PAID_OUT'
  | 'RAISED_AFTER_PAYOUT'
  | 'ADJUSTMENT';
export type Refused = { refused: RefusalReason; message: string };
export type Transition = { entry: CommissionEntry } | Refused;

const refuse = (refused: RefusalReason, message: string): Refused => ({ refused, message });
export const isRefused = <T extends object>(result: T | Refused): result is Refused => 'refused' in result;

type SaleDates = { createdAt: Date };

export const stateOf = (commission: CommissionEntry): CommissionState => commission.state ?? 'OPEN';
export const availableAtOf = (commission: CommissionEntry, sale: SaleDates): Date => commission.availableAt ?? sale.createdAt;

export function statusOf(commission: CommissionEntry, sale: SaleDates, now: Date): CommissionStatus {
  const state = stateOf(commission);
  if (state !== 'OPEN') return state;
  return availableAtOf(commission, sale) <= now ? 'DUE' : 'PENDING';
}

/** What a payout gathers: open (never held), in no payout, and past its hold by date. */
export const isDue = (commission: CommissionEntry, sale: SaleDates, now: Date): boolean =>
  stateOf(commission) === 'OPEN' && !commission.payoutCreated && availableAtOf(commission, sale) <= now;

/** A new commission, open until its date. */
export function earn(input: {
  affiliateId: string;
  amountMinor: number;
  currency: string;
  availableAt: Date;
  commissionPlanId: string | null;
}): CommissionEntry {
  return { id: randomUUID(), ...input, state: 'OPEN', adjusts: null, payoutCreated: false, payoutId: null };
}

const decided = (commission: CommissionEntry, decision: CommissionDecision): CommissionDecision[] => [
  ...(commission.decisions ?? []),
  decision,
];

/** Held for review: only an open commission in no payout (one in a payout is the payout's to settle). */
export function hold(commission: CommissionEntry, decision: Omit<CommissionDecision, 'action'>): Transition {
  const state = stateOf(commission);
  if (state !== 'OPEN') return refuse('NOT_OPEN', `commission ${commission.id} is ${state}; only an open one can be held`);
  if (commission.payoutCreated)
    return refuse('IN_PAYOUT', `commission ${commission.id} is in payout ${commission.payoutId ?? ''}`.trimEnd());
  return { entry: { ...commission, state: 'HELD', decisions: decided(commission, { ...decision, action: 'HOLD' }) } };
}

/** Released from review: open again, PENDING or DUE by its date. */
export function release(commission: CommissionEntry, decision: Omit<CommissionDecision, 'action'>): Transition {
  const state = stateOf(commission);
  if (state !== 'HELD') return refuse('NOT_HELD', `commission ${commission.id} is ${state}; only a HELD commission can be released`);
  return { entry: { ...commission, state: 'OPEN', decisions: decided(commission, { ...decision, action: 'RELEASE' }) } };
}

/** Voided: an open or held commission in no payout; a paid one or one in a payout is taken back by reversing the sale. */
export function voidCommission(commission: CommissionEntry, decision: Omit<CommissionDecision, 'action'>): Transition {
  const state = stateOf(commission);
  if (state === 'VOID') return refuse('ALREADY_VOID', `commission ${commission.id} is already VOID`);
  if (state === 'PAID') return refuse('ALREADY_PAID', `commission ${commission.id} is PAID; reverse the sale to take it back`);
  if (commission.payoutCreated)
    return refuse('IN_PAYOUT', `commission ${commission.id} is in a payout; it is paid or given back by PUT /payouts`);
  return { entry: { ...commission, state: 'VOID', decisions: decided(commission, { ...decision, action: 'VOID' }) } };
}

/**
 * What reversing the sale does to one of its entries: one in no payout is void; one already in a
 * payout (or paid) stays, and an adjustment of the opposite amount, due at once, is deducted from
 * the affiliate's next payout. Adjustments and voided entries stay as they are.
 */
export function reverse(commission: CommissionEntry, now: Date, siblings: CommissionEntry[] = []): CommissionEntry[] {
  if (commission.adjusts || stateOf(commission) === 'VOID') return [commission];
  if (!commission.payoutCreated) {
    return [
      {
        ...commission,
        state: 'VOID',
        decisions: decided(commission, { action: 'VOID', at: now, by: decidedByRules('REVERSAL'), reason: 'the sale was reversed' }),
      },
    ];
  }
  // What earlier adjustments (a partial refund after payout) took back already is not taken twice.
  const stillOwed = netAmountOf(commission, siblings);
  return stillOwed === 0 ? [commission] : [commission, adjustmentOf(commission, -stillOwed, now)];
}

const adjustmentOf = (commission: CommissionEntry, amountMinor: number, now: Date): CommissionEntry => ({
  id: randomUUID(),
  affiliateId: commission.affiliateId,
  amountMinor,
  currency: commission.currency,
  state: 'OPEN',
  availableAt: now,
  commissionPlanId: commission.commissionPlanId ?? null,
  adjusts: commission.id,
  payoutCreated: false,
  payoutId: null,
});

/** What the affiliate keeps of a commission: its amount plus the adjustments among `entries` that adjust it (each negative). */
export const netAmountOf = (commission: CommissionEntry, entries: CommissionEntry[]): number =>
  entries.filter((entry) => entry.adjusts === commission.id).reduce((total, entry) => total + entry.amountMinor, commission.amountMinor);

/**
 * A lower amount for a commission already paid out or in a payout (a partial refund after the
 * payout): the commission stays as it was paid, and an adjustment of the difference, due at once,
 * is deducted from the affiliate's next payout, as `reverse` does for a whole refund. `siblings`
 * are the other entries of its sale, whose earlier adjustments of it count: the amount is the new
 * total the affiliate keeps, so a second refund takes back only what the first did not. The same
 * amount again is no adjustment (null). A higher amount after payout, an open commission (which
 * takes its new amount itself: `markByHand`) and a void one are refused.
 */
export function adjust(
  commission: CommissionEntry,
  siblings: CommissionEntry[],
  amountMinor: number,
  now: Date,
): { adjustment: CommissionEntry | null } | Refused {
  const state = stateOf(commission);
  if (commission.adjusts) return refuse('ADJUSTMENT', `entry ${commission.id} is itself an adjustment`);
  if (state === 'VOID') return refuse('ALREADY_VOID', `commission ${commission.id} is already VOID`);
  if (state !== 'PAID' && !commission.payoutCreated)
    return refuse('NOT_PAID_OUT', `commission ${commission.id} is in no payout; it takes its new amount itself`);
  const kept = netAmountOf(commission, siblings);
  if (amountMinor > kept)
    return refuse('RAISED_AFTER_PAYOUT', `commission ${commission.id} was paid out; its amount can be lowered, not raised`);
  return { adjustment: amountMinor === kept ? null : adjustmentOf(commission, amountMinor - kept, now) };
}

/**
 * Claimed by a payout: only an open commission in no payout. One this payout claimed already (an
 * earlier try of the same draft) is answered as it is, so finishing a draft again claims nothing twice.
 */
export function claimForPayout(commission: CommissionEntry, payoutId: string): Transition {
  if (commission.payoutId === payoutId) return { entry: commission };
  const state = stateOf(commission);
  if (state !== 'OPEN') return refuse('NOT_OPEN', `commission ${commission.id} is ${state}`);
  if (commission.payoutCreated)
    return refuse('IN_PAYOUT', `commission ${commission.id} is in payout ${commission.payoutId ?? ''}`.trimEnd());
  return { entry: { ...commission, payoutCreated: true, payoutId } };
}

const inThisOpenPayout = (commission: CommissionEntry, payoutId: string): Refused | null => {
  if (commission.payoutId !== payoutId) return refuse('NOT_IN_THIS_PAYOUT', `commission ${commission.id} is not in payout ${payoutId}`);
  const state = stateOf(commission);
  return state === 'OPEN' ? null : refuse('NOT_OPEN', `commission ${commission.id} is ${state}`);
};

/** Given back by its payout (a draft that came to nothing, a payout marked FAILED): due again. */
export function releaseFromPayout(commission: CommissionEntry, payoutId: string): Transition {
  return inThisOpenPayout(commission, payoutId) ?? { entry: { ...commission, payoutCreated: false, payoutId: null } };
}

/** Its payout was paid. */
export function markPaid(commission: CommissionEntry, payoutId: string): Transition {
  return inThisOpenPayout(commission, payoutId) ?? { entry: { ...commission, state: 'PAID' } };
}

/**
 * PUT /sales by hand: a new amount and/or marking it as rolled into a payout made outside the
 * payout runs. A HELD commission takes only a new amount. `inRunPayout` says its payoutId is one of the runs' payouts, which PUT /payouts
 * settles, never this.
 */
export function markByHand(
  commission: CommissionEntry,
  change: {
    amountMinor: number;
    recalculating: boolean;
    inPayout: boolean;
    payoutId: string | null;
    inRunPayout: boolean;
    saleId: string;
    now: Date;
  },
): Transition {
  const { saleId } = change;
  const amountChanges = changedAmount(commission, change.amountMinor, change.now);
  const state = stateOf(commission);
  // A held commission in no payout follows its sale's amount (a partial refund while under review),
  // so that releasing it later pays what is still owed, not what was first earned. It stays HELD and
  // is never marked as paid out by hand: only a release makes it payable.
  if (state === 'HELD' && !commission.payoutCreated && !change.inPayout)
    return { entry: { ...commission, amountMinor: change.amountMinor, ...amountChanges } };
  if (state !== 'OPEN') return refuse('NOT_OPEN', `The commission of sale ${saleId} is ${state}; it cannot be changed`);
  if (change.inRunPayout) {
    return refuse(
      'IN_PAYOUT',
      `The commission of sale ${saleId} is in payout ${commission.payoutId ?? ''}: mark the payout PAID or FAILED with PUT /payouts`,
    );
  }
  if (change.recalculating && commission.payoutCreated && change.inPayout) {
    return refuse(
      'IN_PAYOUT',
      `The commission of sale ${saleId} is already in payout ${commission.payoutId ?? ''}`.trimEnd() + '; it cannot be recalculated',
    );
  }
  const { paidOutByHandAt: _previously, ...rest } = commission;
  const samePayout = commission.payoutCreated && commission.payoutId === change.payoutId;
  const byHand = change.inPayout ? { paidOutByHandAt: (samePayout ? commission.paidOutByHandAt : undefined) ?? change.now } : {};
  return {
    entry: {
      ...rest,
      amountMinor: change.amountMinor,
      ...amountChanges,
      payoutCreated: change.inPayout,
      payoutId: change.inPayout ? change.payoutId : null,
      ...byHand,
    },
  };
}

/** The change of amount recorded (nothing when the amount stays): the statement shows it as ADJUSTED when it happened. */
const changedAmount = (commission: CommissionEntry, amountMinor: number, now: Date): Pick<CommissionEntry, 'amountChanges'> =>
  amountMinor === commission.amountMinor
    ? {}
    : { amountChanges: [...(commission.amountChanges ?? []), { at: now, fromMinor: commission.amountMinor, toMinor: amountMinor }] };
