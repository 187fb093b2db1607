import { randomUUID } from 'node:crypto';
import type { CountOutcome } from '../src/data-access/redemption-counters';
import { PromotionalCodeRepository } from '../src/data-access/promotional-code-model';
import { newProgramId, redeemableCode, startCouponService, type Harness } from './coupon-service';

/**
 * The batch rules of the redemption counters (redemption-counters.ts, countBatch): redemptions of one
 * code submitted in the same turn are counted by one conditional write, and the cases that write
 * cannot decide fall back to counting each alone. A second store on the service's database stands
 * for another replica; its batches are made by submitting in one turn, and what "meanwhile" means
 * (between the batch's read and its write) is a real write of the running service, made at that
 * point.
 */
let harness: Harness;
beforeAll(async () => {
  harness = await startCouponService();
});
afterAll(async () => {
  await harness.stop();
});

/** A replica's code counters whose next fresh read of a code is followed by `meanwhile` (another writer) before the batch goes on. */
class Replica extends PromotionalCodeRepository {
  meanwhile: (() => Promise<void>) | undefined;

  override async byId(programId: string, id: string) {
    const read = await super.byId(programId, id);
    const other = this.meanwhile;
    this.meanwhile = undefined;
    await other?.();
    return read;
  }
}

const replica = () => new Replica({ connection: harness.coupon.context.connection });

/** One batch: every key submitted in the same turn. */
const countTogether = (store: Replica, programId: string, codeId: string, keys: string[]): Promise<CountOutcome[]> =>
  Promise.all(keys.map((key) => store.countRedemption(programId, codeId, key)));

async function timesRedeemed(programId: string, codeId: string): Promise<number> {
  return (await harness.api(programId).get('/promotional-codes', { id: codeId }).expect(200)).body.timesRedeemed as number;
}

const keys = (count: number) => Array.from({ length: count }, () => randomUUID());

test('a batch counts as many as there is room for in one write and refuses the rest: the counter reaches the limit exactly', async () => {
  const programId = newProgramId();
  const code = await redeemableCode(harness, programId, {}, { maxRedemptions: 3 });
  const outcomes = await countTogether(replica(), programId, code.promotionalCodeId, keys(5));
  expect(outcomes).toEqual(['counted', 'counted', 'counted', 'limit reached', 'limit reached']);
  expect(await timesRedeemed(programId, code.promotionalCodeId)).toBe(3);
});

test('a refused key of a batch that was counted already (a retry) is decided alone: it stays counted, once, and the counter stays exact', async () => {
  const programId = newProgramId();
  const code = await redeemableCode(harness, programId, {}, { maxRedemptions: 2 });
  const store = replica();
  const retried = randomUUID();
  expect(await store.countRedemption(programId, code.promotionalCodeId, retried)).toBe('counted');

  // Room for one: the batch would refuse the last two, the retry among them.
  const [first, second] = keys(2);
  const outcomes = await countTogether(store, programId, code.promotionalCodeId, [first!, second!, retried]);
  expect(outcomes).toEqual(['counted', 'limit reached', 'counted']);
  expect(await timesRedeemed(programId, code.promotionalCodeId)).toBe(2);
});

test('a batch whose write misses because the limit was lowered meanwhile is counted one by one against the new limit, never past it', async () => {
  const programId = newProgramId();
  const code = await redeemableCode(harness, programId, {}, { maxRedemptions: 5 });
  const store = replica();
  store.meanwhile = async () => {
    await harness.api(programId).put('/promotional-codes', { promotionalCodeId: code.promotionalCodeId, maxRedemptions: 2 }).expect(200);
  };
  const outcomes = await countTogether(store, programId, code.promotionalCodeId, keys(3));
  expect(store.meanwhile).toBeUndefined();
  expect(outcomes).toEqual(['counted', 'counted', 'limit reached']);
  expect(await timesRedeemed(programId, code.promotionalCodeId)).toBe(2);
});

test('a batch whose write misses because another replica counted meanwhile is counted one by one: the limit is filled exactly, the other count kept', async () => {
  const programId = newProgramId();
  const code = await redeemableCode(harness, programId, {}, { maxRedemptions: 3 });
  const store = replica();
  store.meanwhile = async () => {
    await harness
      .api(programId)
      .post('/internal/redemptions', { code: code.code, redemptionKey: randomUUID(), totalEarned: 100 })
      .expect(200);
  };
  // Read with none counted: three fit, the fourth is refused, guarded by the count read (0), which the other redemption changed.
  const outcomes = await countTogether(store, programId, code.promotionalCodeId, keys(4));
  expect(store.meanwhile).toBeUndefined();
  expect(outcomes).toEqual(['counted', 'counted', 'limit reached', 'limit reached']);
  expect(await timesRedeemed(programId, code.promotionalCodeId)).toBe(3);
});
