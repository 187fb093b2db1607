import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import * as affiliate from './affiliate';
import { ErrorBody, ListQuery, NumberedErrorBody } from './common';
import * as coupon from './coupon';
import * as program from './program';
import * as referral from './referral';
import * as sale from './sale';
import * as webhook from './webhook';
import type { ZodTypeAny } from 'zod';
import { z } from './zod';

type Operation = {
  method: RouteConfig['method'];
  path: string;
  summary: string;
  tag: string;
  body?: ZodTypeAny;
  query?: z.AnyZodObject;
  response: ZodTypeAny;
  errorBody?: ZodTypeAny;
  admin?: boolean;
};

const oneOrMany = (schema: ZodTypeAny) => z.union([schema, z.array(schema)]);

/** Every public operation; the document and the gateway's route table both read from here. */
export const API_OPERATIONS: Operation[] = [
  { method: 'post', path: '/coupons', tag: 'Coupons', summary: 'Create a coupon', body: coupon.CreateCouponBody, response: coupon.Coupon },
  { method: 'get', path: '/coupons', tag: 'Coupons', summary: 'Look up coupons', query: coupon.CouponQuery, response: oneOrMany(coupon.Coupon) },
  { method: 'put', path: '/coupons', tag: 'Coupons', summary: 'Update a coupon', body: coupon.UpdateCouponBody, response: coupon.Coupon },
  {
    method: 'delete', path: '/coupons', tag: 'Coupons', summary: 'Delete a coupon and its codes',
    body: coupon.DeleteCouponBody, response: coupon.DeleteCouponResponse, errorBody: NumberedErrorBody,
  },
  { method: 'post', path: '/promotional-codes', tag: 'Promotional codes', summary: 'Create a code', body: coupon.CreatePromotionalCodeBody, response: coupon.PromotionalCode },
  { method: 'get', path: '/promotional-codes', tag: 'Promotional codes', summary: 'Look up codes', query: coupon.PromotionalCodeQuery, response: oneOrMany(coupon.PromotionalCode) },
  { method: 'put', path: '/promotional-codes', tag: 'Promotional codes', summary: 'Update a code', body: coupon.UpdatePromotionalCodeBody, response: coupon.PromotionalCode },
  { method: 'delete', path: '/promotional-codes', tag: 'Promotional codes', summary: 'Delete a code', body: coupon.DeletePromotionalCodeBody, response: z.object({ id: z.string(), deleted: z.literal(true) }) },
  { method: 'post', path: '/affiliates', tag: 'Affiliates', summary: 'Create an affiliate', body: affiliate.CreateAffiliateBody, response: affiliate.Affiliate },
  { method: 'get', path: '/affiliates', tag: 'Affiliates', summary: 'Look up affiliates (null when nothing matches)', query: affiliate.AffiliateQuery, response: z.union([affiliate.Affiliate, z.array(affiliate.Affiliate), z.null()]) },
  { method: 'put', path: '/affiliates', tag: 'Affiliates', summary: 'Update an affiliate', body: affiliate.UpdateAffiliateBody, response: affiliate.Affiliate },
  { method: 'delete', path: '/affiliates', tag: 'Affiliates', summary: 'Delete an affiliate', body: affiliate.DeleteAffiliateBody, response: z.object({ id: z.string(), deleted: z.literal(true) }) },
  { method: 'post', path: '/links', tag: 'Links', summary: 'Add a link', body: affiliate.CreateLinkBody, response: affiliate.LinkResponse },
  { method: 'get', path: '/links', tag: 'Links', summary: 'Look up links', query: affiliate.LinkQuery, response: z.array(affiliate.LinkResponse) },
  { method: 'put', path: '/links', tag: 'Links', summary: 'Rename a link', body: affiliate.RenameLinkBody, response: affiliate.LinkResponse },
  { method: 'delete', path: '/links', tag: 'Links', summary: 'Delete a link', body: affiliate.DeleteLinkBody, response: z.object({ id: z.string(), deleted: z.literal(true) }) },
  { method: 'post', path: '/clicks', tag: 'Links', summary: 'Record a click', body: affiliate.RecordClickBody, response: affiliate.Click },
  { method: 'post', path: '/referrals', tag: 'Referrals', summary: 'Create a referral', body: referral.CreateReferralBody, response: referral.Referral },
  { method: 'get', path: '/referrals', tag: 'Referrals', summary: 'Look up referrals', query: referral.ReferralQuery, response: oneOrMany(referral.Referral) },
  {
    method: 'put', path: '/referrals', tag: 'Referrals', summary: 'Update a referral',
    body: referral.UpdateReferralBody, response: z.object({ message: z.string(), referral: referral.Referral }), errorBody: NumberedErrorBody,
  },
  { method: 'delete', path: '/referrals', tag: 'Referrals', summary: 'Delete a referral', body: referral.DeleteReferralBody, response: z.object({ id: z.string(), deleted: z.literal(true) }) },
  { method: 'post', path: '/sales', tag: 'Sales', summary: 'Attribute a payment', body: sale.CreateSaleBody, response: sale.Sale },
  { method: 'get', path: '/sales', tag: 'Sales', summary: 'Look up sales', query: sale.SaleQuery, response: oneOrMany(sale.Sale) },
  { method: 'put', path: '/sales', tag: 'Sales', summary: 'Recalculate or mark paid', body: sale.UpdateSaleBody, response: sale.Sale },
  { method: 'delete', path: '/sales', tag: 'Sales', summary: 'Reverse a sale', body: sale.DeleteSaleBody, response: z.object({ id: z.string(), deleted: z.literal(true) }) },
  { method: 'post', path: '/webhook-endpoints', tag: 'Webhooks', summary: 'Create a webhook endpoint', body: webhook.CreateWebhookEndpointBody, response: webhook.WebhookEndpoint },
  { method: 'get', path: '/webhook-endpoints', tag: 'Webhooks', summary: 'Look up webhook endpoints', query: webhook.WebhookEndpointQuery, response: oneOrMany(webhook.WebhookEndpoint) },
  { method: 'put', path: '/webhook-endpoints', tag: 'Webhooks', summary: 'Update a webhook endpoint', body: webhook.UpdateWebhookEndpointBody, response: webhook.WebhookEndpoint },
  { method: 'delete', path: '/webhook-endpoints', tag: 'Webhooks', summary: 'Delete a webhook endpoint', body: webhook.DeleteWebhookEndpointBody, response: z.object({ id: z.string(), deleted: z.literal(true) }) },
  { method: 'get', path: '/webhook-deliveries', tag: 'Webhooks', summary: 'Delivery log', query: webhook.WebhookDeliveryQuery, response: z.array(webhook.WebhookDelivery) },
  { method: 'post', path: '/webhook-deliveries/retry', tag: 'Webhooks', summary: 'Re-send a delivery now', body: webhook.RetryDeliveryBody, response: webhook.WebhookDelivery },
  { method: 'post', path: '/webhook-endpoints/test', tag: 'Webhooks', summary: 'Send a signed ping to an endpoint', body: webhook.TestWebhookEndpointBody, response: webhook.WebhookTestResult },
  { method: 'post', path: '/webhook-deliveries/recover', tag: 'Webhooks', summary: 'Re-send every failed delivery of an endpoint in a time window', body: webhook.RecoverDeliveriesBody, response: z.object({ recovered: z.number().int() }) },
  { method: 'get', path: '/event-types', tag: 'Webhooks', summary: 'The fifteen public event types, with the JSON Schema and an example of each payload', response: z.array(webhook.EventTypeDescription) },
  { method: 'post', path: '/programs', tag: 'Admin', summary: 'Create a program', body: program.CreateProgramBody, response: program.Program, admin: true },
  { method: 'get', path: '/programs', tag: 'Admin', summary: 'List programs, newest first', query: ListQuery, response: z.array(program.Program), admin: true },
  { method: 'get', path: '/programs/{id}', tag: 'Admin', summary: 'Read a program', response: program.Program, admin: true },
  { method: 'put', path: '/programs/{id}', tag: 'Admin', summary: 'Update a program', body: program.UpdateProgramBody, response: program.Program, admin: true },
  { method: 'delete', path: '/programs/{id}', tag: 'Admin', summary: 'Delete a program', response: z.object({ id: z.string(), deleted: z.literal(true) }), admin: true },
  { method: 'post', path: '/programs/{id}/api-keys', tag: 'Admin', summary: 'Create an API key (shown once)', response: program.CreatedApiKey, admin: true },
  { method: 'get', path: '/programs/{id}/api-keys', tag: 'Admin', summary: 'List the API keys of a program (without secrets)', response: z.array(program.ApiKeySummary), admin: true },
  { method: 'delete', path: '/api-keys/{id}', tag: 'Admin', summary: 'Revoke an API key', response: z.object({ id: z.string(), revoked: z.literal(true) }), admin: true },
  { method: 'get', path: '/audit-records', tag: 'Admin', summary: 'The audit record of admin actions and refused admin attempts, newest first', query: ListQuery, response: z.array(program.AuditRecord), admin: true },
];

const STANDARD_ERRORS: Record<string, string> = {
  '400': 'Invalid request: the message names the field',
  '401': 'Authorization header missing, not Bearer, or token invalid',
  '403': 'API access is not enabled for the program',
  '404': 'The program of the token no longer exists, or the object is not found',
  '409': 'Idempotency-Key reused with a different body',
  '429': 'Rate limit exceeded for this token on this endpoint, or too many failed authentications from this address',
  '503': 'A dependency is unavailable; retry later',
};

export function buildOpenApiDocument(serverUrl = '/'): ReturnType<OpenApiGeneratorV31['generateDocument']> {
  const registry = new OpenAPIRegistry();
  const bearer = registry.registerComponent('securitySchemes', 'bearerAuth', { type: 'http', scheme: 'bearer' });
  const adminBearer = registry.registerComponent('securitySchemes', 'adminToken', { type: 'http', scheme: 'bearer' });

  for (const operation of API_OPERATIONS) {
    const errorBody = operation.errorBody ?? ErrorBody;
    const responses: RouteConfig['responses'] = {
      '200': { description: 'Success', content: { 'application/json': { schema: operation.response } } },
    };
    for (const [status, description] of Object.entries(STANDARD_ERRORS)) {
      responses[status] = { description, content: { 'application/json': { schema: errorBody } } };
    }
    const path = operation.path.replace(/\{(\w+)\}/g, '{$1}');
    registry.registerPath({
      method: operation.method,
      path: operation.admin ? `/admin/v1${path}` : `/api/v1${path}`,
      summary: operation.summary,
      tags: [operation.tag],
      security: [{ [(operation.admin ? adminBearer : bearer).name]: [] }],
      request: {
        ...(operation.body ? { body: { required: true, content: { 'application/json': { schema: operation.body } } } } : {}),
        ...(operation.query ? { query: operation.query } : {}),
        ...(path.includes('{id}') ? { params: z.object({ id: z.string() }) } : {}),
        ...(operation.method === 'post'
          ? { headers: z.object({ 'idempotency-key': z.string().max(255).optional() }) }
          : {}),
      },
      responses,
    });
  }

  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Affiliate Program Service API',
      version: '1.0.0',
      description: 'Coupons, promotional codes, affiliates, links, referrals, sales and signed webhook events.',
    },
    servers: [{ url: serverUrl }],
  });
}
