import {
  BulkIssueBody,
  CouponQuery,
  CreateCouponBody,
  CreatePromotionalCodeBody,
  DeleteCouponBody,
  DeletePromotionalCodeBody,
  PromotionalCodeQuery,
  RedeemPromotionalCodeBody,
  ReleaseRedemptionBody,
  UpdateCouponBody,
  UpdatePromotionalCodeBody,
} from '@affiliate/contracts';
import {
  createRouter,
  parseBody,
  parseQuery,
  periodOf,
  programIdOf,
  refuseListParametersBeside,
  setNextPageLink,
} from '@affiliate/platform';
import { type Router } from 'express';
import type { AffiliateDirectory } from '../../data-access/affiliate-directory';
import type { CouponRepositories } from '../../data-access/repositories';
import { createCoupon } from '../../domain/create-coupon';
import { createPromotionalCode } from '../../domain/create-promotional-code';
import { deleteCoupon } from '../../domain/delete-coupon';
import { deletePromotionalCode } from '../../domain/delete-promotional-code';
import { findCoupon, isSingleCouponLookup, listCoupons } from '../../domain/find-coupons';
import { findPromotionalCode, isSingleCodeLookup, listPromotionalCodes } from '../../domain/find-promotional-codes';
import { redeemPromotionalCode } from '../../domain/redeem-promotional-code';
import { releaseRedemption } from '../../domain/release-redemption';
import { refuseDiscountChange, updateCoupon } from '../../domain/update-coupon';
import { updatePromotionalCode } from '../../domain/update-promotional-code';
import { issueCodesInBulk } from '../../domain/issue-affiliate-codes';

export type RouteDeps = { repositories: CouponRepositories; affiliates: AffiliateDirectory };

export function couponRoutes({ repositories, affiliates }: RouteDeps): Router {
  const router = createRouter();
  const codeDeps = { repositories, affiliates };
  router.post('/coupons', async (request, response) => {
    const coupon = await createCoupon(repositories, programIdOf(response), parseBody(CreateCouponBody, request));
    response.json(coupon);
  });
  router.get('/coupons', async (request, response) => {
    const query = parseQuery(CouponQuery, request);
    const { limit, startingAfter, id, name, externalId } = query;
    const lookup = { id, name, externalId };
    const createdAt = periodOf(query, 'createdAt');
    if (isSingleCouponLookup(lookup)) {
      refuseListParametersBeside(query, ['id', 'name', 'externalId']);
      response.json(await findCoupon(repositories, programIdOf(response), lookup));
      return;
    }
    const { coupons, nextCursor } = await listCoupons(repositories, programIdOf(response), createdAt, { limit, startingAfter });
    setNextPageLink(request, response, nextCursor, limit);
    response.json(coupons);
  });
  router.put('/coupons', async (request, response) => {
    refuseDiscountChange(request.body);
    const coupon = await updateCoupon(repositories, programIdOf(response), parseBody(UpdateCouponBody, request));
    response.json(coupon);
  });
  router.delete('/coupons', async (request, response) => {
    const { couponId } = parseBody(DeleteCouponBody, request);
    const deleted = await deleteCoupon(repositories, programIdOf(response), couponId);
    response.json(deleted);
  });

  router.post('/promotional-codes/bulk', async (request, response) => {
    response.json(await issueCodesInBulk(codeDeps, programIdOf(response), parseBody(BulkIssueBody, request)));
  });

  router.post('/promotional-codes', async (request, response) => {
    const promotionalCode = await createPromotionalCode(codeDeps, programIdOf(response), parseBody(CreatePromotionalCodeBody, request));
    response.json(promotionalCode);
  });
  router.get('/promotional-codes', async (request, response) => {
    const query = parseQuery(PromotionalCodeQuery, request);
    const { limit, startingAfter, id, code, externalId, couponId, affiliateId, affiliateEmail } = query;
    const lookup = { id, code, externalId, couponId, affiliateId, affiliateEmail };
    const createdAt = periodOf(query, 'createdAt');
    if (isSingleCodeLookup(lookup)) {
      // couponId, affiliateId and affiliateEmail narrow the lookup of one code (they must match it too).
      refuseListParametersBeside(
        query,
        ['id', 'code', 'externalId', 'couponId', 'affiliateId', 'affiliateEmail'],
        'id, code or externalId',
      );
      response.json(await findPromotionalCode(repositories, programIdOf(response), lookup));
      return;
    }
    const { promotionalCodes, nextCursor } = await listPromotionalCodes(repositories, programIdOf(response), lookup, createdAt, {
      limit,
      startingAfter,
    });
    setNextPageLink(request, response, nextCursor, limit);
    response.json(promotionalCodes);
  });
  router.put('/promotional-codes', async (request, response) => {
    const promotionalCode = await updatePromotionalCode(codeDeps, programIdOf(response), parseBody(UpdatePromotionalCodeBody, request));
    response.json(promotionalCode);
  });
  router.delete('/promotional-codes', async (request, response) => {
    const { promotionalCodeId } = parseBody(DeletePromotionalCodeBody, request);
    const deleted = await deletePromotionalCode(repositories, programIdOf(response), promotionalCodeId);
    response.json(deleted);
  });

  // For the sale service only: the gateway never proxies /internal/*.
  router.post('/internal/redemptions', async (request, response) => {
    response.json(await redeemPromotionalCode(repositories, programIdOf(response), parseBody(RedeemPromotionalCodeBody, request)));
  });
  router.post('/internal/redemptions/release', async (request, response) => {
    const { redemptionKey } = parseBody(ReleaseRedemptionBody, request);
    response.json(await releaseRedemption(repositories, programIdOf(response), redemptionKey));
  });

  return router;
}
