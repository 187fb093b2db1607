import {
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
import { parseBody, parseQuery, programIdOf, setNextPageLink } from '@affiliate/platform';
import { Router } from 'express';
import type { AffiliateDirectory } from '../../data-access/affiliate-directory';
import type { CouponModels } from '../../data-access/models';
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

export type RouteDeps = { models: CouponModels; affiliates: AffiliateDirectory };

export function couponRoutes({ models, affiliates }: RouteDeps): Router {
  const router = Router();
  const codeDeps = { models, affiliates };

  router.post('/coupons', async (request, response) => {
    const coupon = await createCoupon(models, programIdOf(response), parseBody(CreateCouponBody, request));
    response.json(coupon);
  });
  router.get('/coupons', async (request, response) => {
    const { limit, startingAfter, ...lookup } = parseQuery(CouponQuery, request);
    if (isSingleCouponLookup(lookup)) {
      response.json(await findCoupon(models, programIdOf(response), lookup));
      return;
    }
    const { coupons, nextCursor } = await listCoupons(models, programIdOf(response), { limit, startingAfter });
    setNextPageLink(request, response, nextCursor, limit);
    response.json(coupons);
  });
  router.put('/coupons', async (request, response) => {
    refuseDiscountChange(request.body);
    const coupon = await updateCoupon(models, programIdOf(response), parseBody(UpdateCouponBody, request));
    response.json(coupon);
  });
  router.delete('/coupons', async (request, response) => {
    const { couponId } = parseBody(DeleteCouponBody, request);
    const deleted = await deleteCoupon(models, programIdOf(response), couponId);
    response.json(deleted);
  });

  router.post('/promotional-codes', async (request, response) => {
    const promotionalCode = await createPromotionalCode(codeDeps, programIdOf(response), parseBody(CreatePromotionalCodeBody, request));
    response.json(promotionalCode);
  });
  router.get('/promotional-codes', async (request, response) => {
    const { limit, startingAfter, ...lookup } = parseQuery(PromotionalCodeQuery, request);
    if (isSingleCodeLookup(lookup)) {
      response.json(await findPromotionalCode(models, programIdOf(response), lookup));
      return;
    }
    const { promotionalCodes, nextCursor } = await listPromotionalCodes(models, programIdOf(response), lookup, { limit, startingAfter });
    setNextPageLink(request, response, nextCursor, limit);
    response.json(promotionalCodes);
  });
  router.put('/promotional-codes', async (request, response) => {
    const promotionalCode = await updatePromotionalCode(codeDeps, programIdOf(response), parseBody(UpdatePromotionalCodeBody, request));
    response.json(promotionalCode);
  });
  router.delete('/promotional-codes', async (request, response) => {
    const { promotionalCodeId } = parseBody(DeletePromotionalCodeBody, request);
    const deleted = await deletePromotionalCode(models, programIdOf(response), promotionalCodeId);
    response.json(deleted);
  });

  // For the sale service only: the gateway never proxies /internal/*.
  router.post('/internal/redemptions', async (request, response) => {
    response.json(await redeemPromotionalCode(models, programIdOf(response), parseBody(RedeemPromotionalCodeBody, request)));
  });
  router.post('/internal/redemptions/release', async (request, response) => {
    const { redemptionKey } = parseBody(ReleaseRedemptionBody, request);
    response.json(await releaseRedemption(models, programIdOf(response), redemptionKey));
  });

  return router;
}
