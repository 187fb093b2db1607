// First, before anything loads express, mongoose or node:http: tracing patches them as they load.
import '@affiliate/platform/telemetry';
import { DEFAULT_HEAVY_OPERATIONS_PER_PROGRAM, runService, serviceUrlSetting } from '@affiliate/platform';
import { z } from 'zod';
import { DEFAULT_UPSTREAM_TIMEOUT_MS, buildSaleService } from './service';

runService({
  name: 'sale',
  config: {
    COUPON_URL: serviceUrlSetting('coupon'),
    AFFILIATE_URL: serviceUrlSetting('affiliate'),
    REFERRAL_URL: serviceUrlSetting('referral'),
    UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(DEFAULT_UPSTREAM_TIMEOUT_MS),
    HEAVY_OPERATIONS_PER_PROGRAM: z.coerce.number().int().min(1).default(DEFAULT_HEAVY_OPERATIONS_PER_PROGRAM),
  },
  build: (context, config) =>
    buildSaleService(context, {
      couponUrl: config.COUPON_URL,
      affiliateUrl: config.AFFILIATE_URL,
      referralUrl: config.REFERRAL_URL,
      upstreamTimeoutMs: config.UPSTREAM_TIMEOUT_MS,
      heavyOperationsPerProgram: config.HEAVY_OPERATIONS_PER_PROGRAM,
    }),
});
