import { randomUUID } from 'node:crypto';
import { exampleEventData, LinkResponse } from '@affiliate/contracts';
import { createEvent } from '@affiliate/platform';
import { eventually } from '@affiliate/platform/testing';
import { createAffiliate, newProgramId, startAffiliateService, type Api, type Harness } from './affiliate-service';

let harness: Harness;
beforeAll(async () => {
  harness = await startAffiliateService();
});
afterAll(() => harness.stop());

const linkNamed = async (api: Api, link: string) => LinkResponse.parse((await api.get('/links', { link })).body[0]);

async function sellOn(programId: string, affiliateId: string, linkId: string, totalEarned: number, currency: string) {
  await harness.publish(
    createEvent(
      'sale.created',
      programId,
      exampleEventData('sale.created', { id: randomUUID(), affiliateId, linkId, referralId: null, totalEarned, currency } as never),
    ),
  );
}

/** Ann with her link "ann" in a new program, sold on in USD (10) and EUR (49.99). */
async function annSoldInTwoCurrencies(): Promise<{
  programId: string;
  api: Api;
  sell: (totalEarned: number, currency: string) => Promise<void>;
}> {
  const programId = newProgramId();
  const api = harness.api(programId);
  const affiliate = await createAffiliate(api, 'ann@example.com', 'ann');
  const sell = (totalEarned: number, currency: string) =>
    sellOn(programId, affiliate.id, affiliate.affiliateLinks[0]!.id, totalEarned, currency);
  await sell(10, 'USD');
  await sell(49.99, 'EUR');
  return { programId, api, sell };
}

test("a link's totalRevenue counts the reporting currency only, and revenueByCurrency keeps every currency apart", async () => {
  const { api, sell } = await annSoldInTwoCurrencies();
  await sell(1000, 'JPY');
  await eventually(async () =>
    expect(await linkNamed(api, 'ann')).toMatchObject({
      sales: 3,
      totalRevenue: 10,
      salesByCurrency: { USD: 1, EUR: 1, JPY: 1 },
      revenueByCurrency: { USD: 10, EUR: 49.99, JPY: 1000 },
    }),
  );
});

test("the program's reporting currency decides what totalRevenue counts", async () => {
  const { programId, api } = await annSoldInTwoCurrencies();
  await eventually(async () => expect((await linkNamed(api, 'ann')).sales).toBe(2));
  await harness.setProgram(programId, { reportingCurrency: 'EUR' });
  await eventually(async () =>
    expect(await linkNamed(api, 'ann')).toMatchObject({ totalRevenue: 49.99, revenueByCurrency: { USD: 10, EUR: 49.99 } }),
  );
});
