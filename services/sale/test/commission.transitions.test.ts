import {
  adjust,
  claimForPayout,
  earn,
  hold,
  isDue,
  isRefused,
  markByHand,
  markPaid,
  release,
  releaseFromPayout,
  reverse,
  statusOf,
  voidCommission,
  type CommissionEntry,
  type Transition,
} from '../src/domain/commission';
import { draftPayout, finishedDraft, settlePayout } from '../src/domain/payout';

// Unit tests of the commission's transitions (domain/commission.ts) and the payout's states (domain/payout.ts): no database, no HTTP.
const sale = { createdAt: new Date('2026-01-01T00:00:00Z') };
const before = new Date('2026-01-10T00:00:00Z');
const after = new Date('2026-03-01T00:00:00Z');
const reviewer = {
  at: new Date('2026-01-05T00:00:00Z'),
  by: { kind: 'API_KEY' as const, keyId: 'key-1', keyPrefix: 'ak_test_' },
  reason: 'looks fine',
};

const earned = (): CommissionEntry =>
  earn({
    affiliateId: 'affiliate-1',
    amountMinor: 1500,
    currency: 'USD',
    availableAt: new Date('2026-01-31T00:00:00Z'),
    commissionPlanId: null,
  });
const next = (result: Transition): CommissionEntry => {
  if (isRefused(result)) throw new Error(`refused: ${result.message}`);
  return result.entry;
};
const refusal = (result: Transition) => (isRefused(result) ? result.refused : 'accepted');

describe('commission transitions', () => {
  test('earn: a new commission is PENDING until its date, then DUE, in no payout', () => {
    const commission = earned();
    expect([statusOf(commission, sale, before), statusOf(commission, sale, after)]).toEqual(['PENDING', 'DUE']);
    expect([commission.payoutCreated, commission.payoutId, commission.adjusts]).toEqual([false, null, null]);
  });

  test('status: an entry stored before plans existed (no state, no date) is DUE since its sale', () => {
    const legacy: CommissionEntry = { id: 'c', affiliateId: 'a', amountMinor: 1, currency: 'USD', payoutCreated: false, payoutId: null };
    expect(statusOf(legacy, sale, sale.createdAt)).toBe('DUE');
  });

  test('due: only an open commission in no payout past its date is due', () => {
    const commission = earned();
    expect([isDue(commission, sale, before), isDue(commission, sale, after)]).toEqual([false, true]);
    expect(isDue(next(hold(commission, reviewer)), sale, after)).toBe(false);
    expect(isDue(next(claimForPayout(commission, 'payout-1')), sale, after)).toBe(false);
  });

  test('hold: an open commission becomes HELD whatever its date, with the decision recorded; a paid or voided one is refused', () => {
    const held = next(hold(earned(), reviewer));
    expect(statusOf(held, sale, after)).toBe('HELD');
    expect(held.decisions).toEqual([{ ...reviewer, action: 'HOLD' }]);
    expect(refusal(hold(next(voidCommission(earned(), reviewer)), reviewer))).toBe('NOT_OPEN');
    expect(refusal(hold(next(claimForPayout(earned(), 'payout-1')), reviewer))).toBe('IN_PAYOUT');
  });

  test('release: a held commission is PENDING or DUE again by its date; one not held is refused', () => {
    const released = next(release(next(hold(earned(), reviewer)), { ...reviewer, reason: 'checked' }));
    expect([statusOf(released, sale, before), statusOf(released, sale, after)]).toEqual(['PENDING', 'DUE']);
    expect(released.decisions?.map((decision) => decision.action)).toEqual(['HOLD', 'RELEASE']);
    expect(refusal(release(earned(), reviewer))).toBe('NOT_HELD');
  });

  test('void: an open or held commission becomes VOID; a paid one, a void one or one in a payout is refused', () => {
    expect(statusOf(next(voidCommission(next(hold(earned(), reviewer)), reviewer)), sale, after)).toBe('VOID');
    expect(refusal(voidCommission(next(voidCommission(earned(), reviewer)), reviewer))).toBe('ALREADY_VOID');
    const inPayout = next(claimForPayout(earned(), 'payout-1'));
    expect(refusal(voidCommission(inPayout, reviewer))).toBe('IN_PAYOUT');
    expect(refusal(voidCommission(next(markPaid(inPayout, 'payout-1')), reviewer))).toBe('ALREADY_PAID');
  });

  test('reverse: an unpaid commission is voided; one in a payout stays and gets an adjustment of the opposite amount, due at once', () => {
    const now = new Date('2026-01-03T00:00:00Z');
    const [voided] = reverse(earned(), now);
    expect(statusOf(voided!, sale, after)).toBe('VOID');
    const inPayout = next(claimForPayout(earned(), 'payout-1'));
    const [kept, adjustment] = reverse(inPayout, now);
    expect(kept).toEqual(inPayout);
    expect(adjustment).toMatchObject({ amountMinor: -1500, adjusts: inPayout.id, payoutCreated: false });
    expect(statusOf(adjustment!, sale, now)).toBe('DUE');
    expect(reverse(adjustment!, now)).toEqual([adjustment]);
  });

  test('claim for a payout: an open commission is claimed once; a held, voided or otherwise claimed one is refused; the same payout again is a no-op', () => {
    const claimed = next(claimForPayout(earned(), 'payout-1'));
    expect([claimed.payoutCreated, claimed.payoutId]).toEqual([true, 'payout-1']);
    expect(next(claimForPayout(claimed, 'payout-1'))).toBe(claimed);
    expect(refusal(claimForPayout(claimed, 'payout-2'))).toBe('IN_PAYOUT');
    expect(refusal(claimForPayout(next(hold(earned(), reviewer)), 'payout-1'))).toBe('NOT_OPEN');
    expect(refusal(claimForPayout(next(voidCommission(earned(), reviewer)), 'payout-1'))).toBe('NOT_OPEN');
  });

  test("release from a payout: its own payout gives it back, due again; another payout's is refused", () => {
    const claimed = next(claimForPayout(earned(), 'payout-1'));
    expect(isDue(next(releaseFromPayout(claimed, 'payout-1')), sale, after)).toBe(true);
    expect(refusal(releaseFromPayout(claimed, 'payout-2'))).toBe('NOT_IN_THIS_PAYOUT');
  });

  test("mark paid: its own payout's commission becomes PAID; another payout's or a paid one is refused", () => {
    const paid = next(markPaid(next(claimForPayout(earned(), 'payout-1')), 'payout-1'));
    expect(statusOf(paid, sale, after)).toBe('PAID');
    expect(refusal(markPaid(paid, 'payout-1'))).toBe('NOT_OPEN');
    expect(refusal(markPaid(next(claimForPayout(earned(), 'payout-1')), 'payout-2'))).toBe('NOT_IN_THIS_PAYOUT');
  });

  test("marking by hand (PUT /sales): an open commission takes a new amount or a payout made elsewhere; a run's payout, a paid one or recalculating inside a payout is refused", () => {
    const change = { saleId: 's', amountMinor: 900, recalculating: true, inPayout: false, payoutId: null, inRunPayout: false, now: before };
    expect(next(markByHand(earned(), change)).amountMinor).toBe(900);
    expect(
      next(markByHand(earned(), { ...change, recalculating: false, amountMinor: 1500, inPayout: true, payoutId: 'ext-7' })),
    ).toMatchObject({ payoutCreated: true, payoutId: 'ext-7' });
    expect(refusal(markByHand(next(claimForPayout(earned(), 'payout-1')), { ...change, inRunPayout: true }))).toBe('IN_PAYOUT');
    expect(refusal(markByHand(next(claimForPayout(earned(), 'ext-7')), { ...change, inPayout: true }))).toBe('IN_PAYOUT');
    expect(refusal(markByHand(next(hold(earned(), reviewer)), { ...change, inPayout: true, payoutId: 'ext-7' }))).toBe('NOT_OPEN');
  });

  test('marking by hand (PUT /sales): a HELD commission in no payout takes the new amount and stays HELD', () => {
    const change = { saleId: 's', amountMinor: 900, recalculating: true, inPayout: false, payoutId: null, inRunPayout: false, now: before };
    expect(next(markByHand(next(hold(earned(), reviewer)), change))).toMatchObject({
      state: 'HELD',
      amountMinor: 900,
      payoutCreated: false,
      payoutId: null,
    });
  });

  test('marking by hand (PUT /sales): a new amount before payout is recorded as a change of amount, so a past statement keeps the amount first earned', () => {
    const changed = next(
      markByHand(earned(), {
        saleId: 's',
        amountMinor: 900,
        recalculating: true,
        inPayout: false,
        payoutId: null,
        inRunPayout: false,
        now: before,
      }),
    );
    expect(changed).toMatchObject({ amountMinor: 900, amountChanges: [{ at: before, fromMinor: 1500, toMinor: 900 }] });
    const marked = next(
      markByHand(changed, {
        saleId: 's',
        amountMinor: 900,
        recalculating: false,
        inPayout: true,
        payoutId: 'ext-7',
        inRunPayout: false,
        now: after,
      }),
    );
    expect(marked.amountChanges).toHaveLength(1);
  });

  test('adjust: a lower amount for a paid or in-payout commission leaves it as paid and adds a negative adjustment, due at once; a second lower amount takes back only the rest', () => {
    const now = new Date('2026-02-01T00:00:00Z');
    const paid = next(markPaid(next(claimForPayout(earned(), 'payout-1')), 'payout-1'));
    const first = adjust(paid, [], 1000, now);
    if (isRefused(first)) throw new Error(first.message);
    expect(first.adjustment).toMatchObject({
      amountMinor: -500,
      adjusts: paid.id,
      state: 'OPEN',
      availableAt: now,
      payoutCreated: false,
      payoutId: null,
      affiliateId: 'affiliate-1',
      currency: 'USD',
    });
    expect(statusOf(first.adjustment!, sale, now)).toBe('DUE');
    const second = adjust(paid, [first.adjustment!], 600, now);
    expect(isRefused(second) ? second.refused : second.adjustment?.amountMinor).toBe(-400);
    expect(adjust(paid, [first.adjustment!], 1000, now)).toEqual({ adjustment: null });
    // A commission in a payout not paid yet is adjusted the same way (the payout pays what it claimed).
    const inPayout = next(claimForPayout(earned(), 'payout-2'));
    expect(isRefused(adjust(inPayout, [], 0, now)) ? 'refused' : 'adjusted').toBe('adjusted');
    // Reversing the sale afterwards takes back only what the adjustment left.
    expect(reverse(paid, now, [paid, first.adjustment!])[1]).toMatchObject({ amountMinor: -1000, adjusts: paid.id });
    expect(reverse(paid, now, [paid, { ...first.adjustment!, amountMinor: -1500 }])).toEqual([paid]);
  });

  test('adjust: a raise after payout, an open commission in no payout, a voided one and an adjustment itself are refused', () => {
    const now = new Date('2026-02-01T00:00:00Z');
    const paid = next(markPaid(next(claimForPayout(earned(), 'payout-1')), 'payout-1'));
    const refusedAs = (result: ReturnType<typeof adjust>) => (isRefused(result) ? result.refused : 'accepted');
    expect(refusedAs(adjust(paid, [], 2000, now))).toBe('RAISED_AFTER_PAYOUT');
    expect(refusedAs(adjust(earned(), [], 1000, now))).toBe('NOT_PAID_OUT');
    expect(refusedAs(adjust(next(voidCommission(earned(), reviewer)), [], 1000, now))).toBe('ALREADY_VOID');
    const [, adjustment] = reverse(paid, now);
    expect(refusedAs(adjust(adjustment!, [], -100, now))).toBe('ADJUSTMENT');
  });
});

describe('payout states', () => {
  const payee = { name: 'Ada Byron', email: 'ada@example.com', payoutDetails: null };
  const draft = () =>
    draftPayout({
      programId: 'p',
      affiliateId: 'a',
      currency: 'USD',
      items: [{ saleId: 's', commissionId: 'c', amountMinor: 1500 }],
      payee,
      now: after,
    });

  test('a draft is DRAFT with the total of its items', () => {
    expect(draft()).toMatchObject({ status: 'DRAFT', amountMinor: 1500, settling: false, paidAt: null });
  });

  test('a finished draft is PENDING with what it claimed, or discarded when that is not positive', () => {
    expect(finishedDraft([{ saleId: 's', commissionId: 'c', amountMinor: 700 }], after)).toMatchObject({
      status: 'PENDING',
      amountMinor: 700,
    });
    expect(finishedDraft([{ saleId: 's', commissionId: 'c', amountMinor: -700 }], after)).toBe('DISCARD');
  });

  test('settling: PENDING becomes PAID or FAILED while settling; the same again once settled is nothing; PAID cannot become FAILED', () => {
    const pending = { ...draft(), status: 'PENDING' as const };
    expect(settlePayout(pending, { status: 'PAID' }, after)).toMatchObject({ status: 'PAID', settling: true, paidAt: after });
    expect(settlePayout({ ...pending, status: 'PAID', settling: true }, { status: 'PAID' }, after)).toMatchObject({ settling: true });
    expect(settlePayout({ ...pending, status: 'PAID' }, { status: 'PAID' }, after)).toBeNull();
    expect(() => settlePayout({ ...pending, status: 'PAID' }, { status: 'FAILED' }, after)).toThrow('cannot become FAILED');
  });
});
