import { createHash, randomUUID } from 'node:crypto';
import type { AttributionReason, CreateSaleBody, InternalAffiliate, Redemption, Referral, Risk, Sale } from '@affiliate/contracts';
import { AppError, badRequest, conflict, roundToMinorUnit, toMinorUnits, UniqueKeyConflict } from '@affiliate/platform';
import { RedemptionInProgress, redeemCode, releaseRedemption } from '../data-access/coupon-redemptions';
import { externalIdKeyOf, toSale, type SaleDocument } from '../data-access/sales';
import { activeAffiliate, attributionByPromoCode, creditOf, type PinnedCredit } from './attribute-sale';
import { commissionFor, type Earned } from './commission-rules';
import { saleCreated } from './sale-events';
import { claimCustomer, earnedCommission, riskOfSale } from './sale-risk';
import type { SaleDependencies } from './sale-dependencies';

const MAX_REDEMPTION_KEY_LENGTH = 200;
/** A client clock this far ahead of ours is still "now". */
const CLOCK_SKEW_MS = 5 * 60_000;

const paidAtOf = (input: CreateSaleBody): Date => new Date(input.paidAt ?? Date.now());
const IN_PROGRESS_RETRIES = 20;
/** The Retry-After of the 409 when a sale with the same externalId is still being recorded: about the time one takes. */
const RECORDING_RETRY_AFTER_SECONDS = 1;
const RELEASE_ATTEMPTS = 5;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A recorded payment, and whether it was recorded by an earlier request with the same externalId. */
export type RecordedPayment = { sale: Sale; replayed: boolean };

/**
 * Records a payment for an integration (Stripe): a repeat of its externalId returns the sale
 * already recorded, whatever it carries (the same invoice may be settled again by its checkout).
 */
export async function recordSale(deps: SaleDependencies, programId: string, body: CreateSaleBody, pinned?: PinnedCredit): Promise<Sale> {
  return (await recordPayment(deps, programId, body, { pinned })).sale;
}

/**
 * POST /sales. With an externalId the payment is recorded once, whatever the retries: a repeat
 * returns the sale already recorded (`replayed`), without a second redemption or commission; with
 * `refuseOtherContent`, only a repeat with the same content (amount, currency, attribution), and
 * another is a 409 naming the sale, so a caller never believes a different payment was recorded.
 * An integration that knows the customer's attribution already (a Stripe checkout) pins it.
 */
export async function recordPayment(
  deps: SaleDependencies,
  programId: string,
  body: CreateSaleBody,
  options: { pinned?: PinnedCredit; refuseOtherContent?: boolean } = {},
): Promise<RecordedPayment> {
  const { pinned } = options;
  if (body.paidAt !== undefined && Date.parse(body.paidAt) > Date.now() + CLOCK_SKEW_MS)
    throw badRequest('paidAt: must not be in the future', 'parameter_invalid', 'paidAt');
  const input = { ...body, paidAt: body.paidAt ?? new Date().toISOString() };
  const externalIdKey = input.externalId === undefined ? undefined : externalIdKeyOf(programId, input.externalId);
  const content = contentOf(input);
  const replay = (recorded: SaleDocument): RecordedPayment => ({
    sale: repeated(recorded, options.refuseOtherContent ? content : undefined),
    replayed: true,
  });
  if (input.externalId !== undefined) {
    const recorded = await deps.repositories.sales.byExternalId(programId, input.externalId);
    if (recorded) return replay(recorded);
  }
  try {
    const sale =
      input.promoCode !== undefined && pinned === undefined
        ? await recordPromoCodeSale(deps, programId, input, input.promoCode, externalIdKey, content)
        : await recordCreditedSale(deps, programId, input, externalIdKey, pinned, content);
    return { sale, replayed: false };
  } catch (error) {
    // A concurrent request with the same externalId stored the sale first.
    if (!(error instanceof StoredMeanwhile)) throw error;
    return replay(error.recorded);
  }
}

/**
 * What makes two requests with one externalId the same payment: the amount in minor units, the
 * currency and the attribution as sent. Kept with the sale (a later PUT of its amount does not
 * change what its first request said).
 */
function contentOf(input: CreateSaleBody): string {
  return JSON.stringify([
    toMinorUnits(input.totalEarned, input.currency),
    input.currency,
    input.promoCode ?? null,
    input.referralId ?? null,
    input.email?.toLowerCase() ?? null,
    input.clickId ?? null,
    input.visitorId ?? null,
  ]);
}

/** The sale with this externalId was stored by a concurrent request while this one was working. */
class StoredMeanwhile extends Error {
  constructor(readonly recorded: SaleDocument) {
    super('stored meanwhile');
  }
}

/** A sale through a referral (by id or email) or a click (by click or visitor id). */
async function recordCreditedSale(
  deps: SaleDependencies,
  programId: string,
  input: CreateSaleBody,
  externalIdKey: string | undefined,
  pinned: PinnedCredit | undefined,
  content: string,
): Promise<Sale> {
  const credit = await creditOf(deps, programId, input, paidAtOf(input), pinned);
  const affiliate = await activeAffiliate(deps, programId, credit.affiliateId);
  const earned = await commissionOf(deps, programId, input, affiliate, credit.customer);
  const risk = await riskOfSale(deps, programId, input, affiliate, earned, credit);
  const sale = newSale(programId, input, externalIdKey, affiliate, earned, risk, content, {
    referralId: credit.referral?.id ?? null,
    linkId: credit.linkId,
    attribution: credit.attribution,
  });
  try {
    return await store(deps, sale, affiliate, credit.referral, earned, credit.customer);
  } catch (error) {
    if (input.externalId !== undefined && error instanceof UniqueKeyConflict)
      throw new StoredMeanwhile(await storedByExternalId(deps, programId, input.externalId));
    throw error;
  }
}

/**
 * Redeem at the coupon service, then store the sale with sale.created in one write. Once the
 * redemption is counted, every way out without a stored sale gives it back, so the code's and the
 * coupon's counters always equal the sales recorded.
 */
async function recordPromoCodeSale(
  deps: SaleDependencies,
  programId: string,
  input: CreateSaleBody,
  promoCode: string,
  externalIdKey: string | undefined,
  content: string,
): Promise<Sale> {
  const redemptionKey = externalIdKey === undefined ? randomUUID() : redemptionKeyOf(externalIdKey);
  const totalEarned = roundToMinorUnit(input.totalEarned, input.currency);
  const redemption = await redeem(deps, programId, {
    code: promoCode,
    redemptionKey,
    totalEarned,
    currency: input.currency,
    customerId: input.customerId ?? null,
    firstTimeOrder: input.firstTimeOrder,
    productIds: input.productIds,
  }).catch((error: unknown) => {
    // A refusal counted nothing. A failed call may have been counted all the same (a timeout): a key
    // of this request alone is given back in the background; a key from an externalId is left for
    // the client's retry, which reuses it.
    const refused = error instanceof AppError && error.status < 500;
    if (externalIdKey === undefined && !refused) {
      void giveBack(deps, programId, redemptionKey, undefined);
    }
    throw error;
  });

  try {
    const affiliate = await activeAffiliate(deps, programId, redemption.affiliateId);
    const customer = input.customerId === undefined ? null : `customer:${input.customerId}`;
    const earned = await commissionOf(deps, programId, input, affiliate, customer);
    const risk = await riskOfSale(deps, programId, input, affiliate, earned, null);
    const sale = newSale(programId, input, externalIdKey, affiliate, earned, risk, content, { redemption, redemptionKey });
    return await store(deps, sale, affiliate, null, earned, customer);
  } catch (error) {
    // A concurrent request with the same externalId stored the sale first, under this very key.
    if (input.externalId !== undefined && error instanceof UniqueKeyConflict)
      throw new StoredMeanwhile(await storedByExternalId(deps, programId, input.externalId));
    await giveBack(deps, programId, redemptionKey, input.externalId);
    throw error;
  }
}

/** The coupon service answers 409 while the same key is being counted for another request; wait for it. */
async function redeem(deps: SaleDependencies, programId: string, body: Parameters<typeof redeemCode>[2]): Promise<Redemption> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await redeemCode(deps.coupons, programId, body);
    } catch (error) {
      if (!(error instanceof RedemptionInProgress)) throw error;
      if (attempt >= IN_PROGRESS_RETRIES) {
        throw new AppError(409, `A sale with this externalId is being recorded right now; retry in ${RECORDING_RETRY_AFTER_SECONDS} s`, {
          code: 'concurrent_modification',
          retryAfterSeconds: RECORDING_RETRY_AFTER_SECONDS,
        });
      }
      await pause(25 * attempt);
    }
  }
}

/** Releases a counted redemption, unless a sale with its externalId was stored meanwhile (then it is that sale's). */
async function giveBack(deps: SaleDependencies, programId: string, redemptionKey: string, externalId: string | undefined): Promise<void> {
  if (externalId !== undefined) {
    const recorded = await deps.repositories.sales.byExternalId(programId, externalId).catch(() => null);
    if (recorded) return;
  }
  for (let attempt = 1; attempt <= RELEASE_ATTEMPTS; attempt += 1) {
    try {
      if (await releaseRedemption(deps.coupons, programId, redemptionKey)) return;
    } catch {
      // The coupon service is unreachable right now; the next attempt may get through.
    }
    await pause(100 * attempt);
  }
  deps.logger.error({ programId, redemptionKey }, 'a redemption without a sale could not be released; its counters are one too high');
}

function redemptionKeyOf(externalIdKey: string): string {
  const key = `sale:${externalIdKey}`;
  if (key.length <= MAX_REDEMPTION_KEY_LENGTH) return key;
  return `sale:${externalIdKey.split(':')[0]}:sha256:${createHash('sha256').update(externalIdKey).digest('hex')}`;
}

type SaleSource =
  { referralId: string | null; linkId: string | null; attribution: AttributionReason } | { redemption: Redemption; redemptionKey: string };

/**
 * The commission under the affiliate's plan in force now. A sale that names its customer (the
 * referral, else customerId) is that customer's first payment or a later one; one that names none
 * counts as a first payment.
 */
async function commissionOf(
  deps: SaleDependencies,
  programId: string,
  input: CreateSaleBody,
  affiliate: InternalAffiliate,
  customer: string | null,
): Promise<Earned | null> {
  const firstPaymentAt =
    customer === null ? null : await deps.repositories.customerPayments.firstPaymentAt(programId, affiliate.id, customer);
  const payment = {
    totalEarnedMinor: toMinorUnits(input.totalEarned, input.currency),
    currency: input.currency,
    paymentTrigger: input.paymentTrigger,
    at: paidAtOf(input),
  };
  return commissionFor(affiliate.plan, payment, firstPaymentAt);
}

function newSale(
  programId: string,
  input: CreateSaleBody,
  externalIdKey: string | undefined,
  affiliate: InternalAffiliate,
  earned: Earned | null,
  risk: Risk,
  content: string,
  source: SaleSource,
): SaleDocument {
  const now = new Date();
  const totalEarnedMinor = toMinorUnits(input.totalEarned, input.currency);
  const byCode = 'redemption' in source ? source : null;
  return {
    _id: randomUUID(),
    programId,
    affiliateId: affiliate.id,
    referralId: 'referralId' in source ? source.referralId : null,
    promotionalCodeId: byCode?.redemption.promotionalCodeId ?? null,
    couponId: byCode?.redemption.couponId ?? null,
    promoCode: byCode?.redemption.code ?? null,
    linkId: 'linkId' in source ? source.linkId : null,
    externalId: input.externalId ?? null,
    ...(externalIdKey === undefined ? {} : { externalIdKey, requestContent: content }),
    redemptionKey: byCode?.redemptionKey ?? null,
    customerId: input.customerId ?? null,
    totalEarnedMinor,
    currency: input.currency,
    commissionRate: earned ? earned.rate : null,
    commissionEarnedMinor: earned?.amountMinor ?? 0,
    commissionPlanId: affiliate.plan.id,
    paymentTrigger: input.paymentTrigger,
    paidAt: paidAtOf(input),
    commissions: earned ? [earnedCommission(earned, affiliate, risk, now)] : [],
    risk,
    attribution: 'attribution' in source ? source.attribution : attributionByPromoCode(affiliate.id),
    reversedAt: null,
    createdAt: now,
    updatedAt: now,
  };
}

/** Stores the sale with sale.created; a customer's first payment then becomes the one recurring rules count from. */
async function store(
  deps: SaleDependencies,
  sale: SaleDocument,
  affiliate: InternalAffiliate,
  referral: Referral | null,
  earned: Earned | null,
  customer: string | null,
): Promise<Sale> {
  await deps.repositories.sales.insert(sale, (stored) => [saleCreated(stored, affiliate, referral)]);
  await claimCustomer(deps, sale.programId, { customerId: sale.customerId, email: referral?.email }, affiliate.id, sale._id);
  if (customer !== null && earned?.first) {
    await deps.repositories.customerPayments.recordFirst(sale.programId, affiliate.id, customer, {
      id: sale._id,
      at: sale.paidAt ?? sale.createdAt,
    });
  }
  return toSale(sale);
}

async function storedByExternalId(deps: SaleDependencies, programId: string, externalId: string): Promise<SaleDocument> {
  const recorded = await deps.repositories.sales.byExternalId(programId, externalId);
  if (!recorded) throw conflict('A sale with this externalId is being changed right now; retry');
  return recorded;
}

/**
 * The sale an externalId already names. With `content`, only for a request with the same content:
 * sales stored before the content was kept are compared by amount and currency.
 */
function repeated(recorded: SaleDocument, content: string | undefined): Sale {
  if (recorded.reversedAt) {
    throw badRequest(
      `externalId: the sale with externalId ${recorded.externalId} was reversed; a reversed payment cannot be recorded again`,
      'sale_reversed',
      'externalId',
    );
  }
  if (content !== undefined && !sameContent(recorded, content)) {
    throw conflict(
      `externalId: ${recorded.externalId} is already the sale ${recorded._id}, recorded with another amount, currency or attribution; a new payment needs a new externalId`,
      'external_id_reused',
    );
  }
  return toSale(recorded);
}

function sameContent(recorded: SaleDocument, content: string): boolean {
  if (recorded.requestContent) return recorded.requestContent === content;
  const [amountMinor, currency] = JSON.parse(content) as [number, string];
  return recorded.totalEarnedMinor === amountMinor && recorded.currency === currency;
}
