/**
 * The header row of every CSV the API answers, in column order. One list per export, read by the
 * service that writes the rows and by the document's examples, so the two cannot differ.
 */
export const CSV_COLUMNS = {
  affiliates: ['id', 'first_name', 'last_name', 'email', 'status', 'commission_rate', 'created_at'],
  referrals: ['id', 'affiliate_id', 'link_id', 'email', 'name', 'referred_user_external_id', 'plan', 'status', 'created_at'],
  sales: [
    'id',
    'affiliate_id',
    'referral_id',
    'promo_code',
    'external_id',
    'customer_id',
    'total_earned',
    'currency',
    'commission_earned',
    'commission_currency',
    'payment_trigger',
    'paid_at',
    'created_at',
  ],
  commissions: ['id', 'sale_id', 'affiliate_id', 'amount', 'currency', 'status', 'available_at', 'adjusts', 'payout_id', 'sale_created_at'],
  /** What a mass-payout tool takes: who, how, how much. */
  payouts: [
    'payout_id',
    'affiliate_id',
    'name',
    'email',
    'payout_method',
    'payout_email',
    'account_holder',
    'iban',
    'note',
    'amount',
    'currency',
    'status',
  ],
  /** One row per affiliate and currency (AffiliateReportRow). */
  affiliateReport: [
    'affiliate_id',
    'name',
    'email',
    'currency',
    'clicks',
    'referrals',
    'sales',
    'revenue',
    'commission_earned',
    'commission_pending',
    'commission_held',
    'commission_due',
    'commission_paid',
    'commission_voided',
  ],
  statement: ['type', 'at', 'amount', 'currency', 'sale_id', 'commission_id', 'payout_id', 'description'],
} as const satisfies Record<string, readonly string[]>;
