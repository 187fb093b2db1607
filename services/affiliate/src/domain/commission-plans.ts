import { randomUUID } from 'node:crypto';
import {
  planTermsProblem,
  type CommissionPlan,
  DEFAULT_HOLD_DAYS,
  type CreateCommissionPlanBody,
  type PlanInForce,
  type UpdateCommissionPlanBody,
} from '@affiliate/contracts';
import { badRequest, notFound, type PageRequest } from '@affiliate/platform';
import type { AffiliateDocument, PlanSummary } from '../data-access/affiliates';
import { toCommissionPlan, type CommissionPlanDocument } from '../data-access/commission-plans';
import type { Repositories } from '../data-access/repositories';

const noPlan = (planId: string) => notFound(`No commission plan with id ${planId} in this program`);

/** POST /commission-plans. With isDefault the plan becomes the program's default at once. */
export async function createCommissionPlan(
  repositories: Repositories,
  programId: string,
  input: CreateCommissionPlanBody,
): Promise<CommissionPlan> {
  const now = new Date();
  const plan: CommissionPlanDocument = {
    _id: randomUUID(),
    programId,
    name: input.name,
    commissionType: input.commissionType,
    rate: input.rate,
    currency: input.currency ?? null,
    firstPaymentRate: input.firstPaymentRate ?? null,
    recurring: input.recurring,
    recurringMonths: input.recurringMonths ?? null,
    holdDays: input.holdDays,
    minimumPayout: input.minimumPayout ?? null,
    tiers: input.tiers,
    createdAt: now,
    updatedAt: now,
  };
  await repositories.commissionPlans.insert(plan, () => []);
  if (input.isDefault) await repositories.defaultPlans.set(programId, plan._id);
  return toCommissionPlan(plan, await repositories.defaultPlans.of(programId));
}

/**
 * PUT /commission-plans: the plan after the change obeys the same rules as a new one. Commissions
 * already earned keep the terms they were computed with; sales from now on use the new terms.
 */
export async function updateCommissionPlan(
  repositories: Repositories,
  programId: string,
  input: UpdateCommissionPlanBody,
): Promise<CommissionPlan> {
  const { commissionPlanId, isDefault, ...changes } = input;
  const updated = await repositories.commissionPlans.change(programId, commissionPlanId, (current) => {
    const next = { ...current, ...changes };
    const problem = planTermsProblem(next);
    if (problem) throw badRequest(problem.message, 'parameter_invalid', problem.path);
    return { set: { ...changes, updatedAt: new Date() } as Partial<CommissionPlanDocument>, events: () => [] };
  });
  if (!updated) throw noPlan(commissionPlanId);
  const plan = updated;
  if (isDefault === true) await repositories.defaultPlans.set(programId, plan._id);
  if (isDefault === false) await repositories.defaultPlans.clearIf(programId, plan._id);
  return toCommissionPlan(plan, await repositories.defaultPlans.of(programId));
}

/** DELETE /commission-plans: refused while affiliates are assigned it, and while it is the program's default. */
export async function deleteCommissionPlan(
  repositories: Repositories,
  programId: string,
  planId: string,
): Promise<{ id: string; deleted: true }> {
  if (!(await repositories.commissionPlans.byId(programId, planId))) throw noPlan(planId);
  if ((await repositories.defaultPlans.of(programId)) === planId) {
    throw badRequest(
      `Commission plan ${planId} is the program's default: make another plan the default, or send isDefault false, first`,
      'commission_plan_in_use',
    );
  }
  const assigned = await repositories.affiliates.countOnPlan(programId, planId);
  if (assigned > 0) {
    throw badRequest(
      `Commission plan ${planId} cannot be deleted: ${assigned} affiliate${assigned === 1 ? ' is' : 's are'} on it; move ${assigned === 1 ? 'it' : 'them'} to another plan first`,
      'commission_plan_in_use',
    );
  }
  const removed = await repositories.commissionPlans.remove(programId, planId, () => []);
  if (!removed) throw noPlan(planId);
  return { id: planId, deleted: true };
}

export async function commissionPlanById(repositories: Repositories, programId: string, planId: string): Promise<CommissionPlan> {
  const plan = await repositories.commissionPlans.byId(programId, planId);
  if (!plan) throw noPlan(planId);
  return toCommissionPlan(plan, await repositories.defaultPlans.of(programId));
}

export async function listCommissionPlans(
  repositories: Repositories,
  programId: string,
  page: PageRequest,
): Promise<{ items: CommissionPlan[]; nextCursor: string | null }> {
  const [{ items, nextCursor }, defaultPlanId] = await Promise.all([
    repositories.commissionPlans.list(programId, page),
    repositories.defaultPlans.of(programId),
  ]);
  return { items: items.map((plan) => toCommissionPlan(plan, defaultPlanId)), nextCursor };
}

/** A plan an affiliate is being assigned: it must exist in the program (400 otherwise, as every identifier that does not resolve). */
export async function assignablePlan(repositories: Repositories, programId: string, planId: string): Promise<CommissionPlanDocument> {
  const plan = await repositories.commissionPlans.byId(programId, planId);
  if (!plan)
    throw badRequest(`commissionPlanId: no commission plan with id ${planId} in this program`, 'resource_missing', 'commissionPlanId');
  return plan;
}

/**
 * The plan an affiliate earns by: its own, else the program's default; null when neither exists
 * (the affiliate earns its own commissionRate, as before plans existed). A plan deleted under an
 * assignment that raced the deletion counts as no plan of its own. `recently`: as this process read
 * the plans within RECENT_READS_MS (every sale asks), its own changes seen at once.
 */
export async function planOf(
  repositories: Repositories,
  affiliate: AffiliateDocument,
  options: { recently?: boolean } = {},
): Promise<CommissionPlanDocument | null> {
  const { commissionPlans, defaultPlans } = repositories;
  const planById = (id: string) =>
    options.recently ? commissionPlans.byIdCached(affiliate.programId, id) : commissionPlans.byId(affiliate.programId, id);
  const own = affiliate.commissionPlanId ? await planById(affiliate.commissionPlanId) : null;
  if (own) return own;
  const defaultPlanId = await (options.recently ? defaultPlans.recentlyOf(affiliate.programId) : defaultPlans.of(affiliate.programId));
  return defaultPlanId ? planById(defaultPlanId) : null;
}

export async function planSummaryOf(repositories: Repositories, affiliate: AffiliateDocument): Promise<PlanSummary | null> {
  const plan = await planOf(repositories, affiliate);
  return plan ? { id: plan._id, name: plan.name } : null;
}

/** The plans of a page of affiliates: each plan read once. */
export async function planSummariesOf(
  repositories: Repositories,
  programId: string,
  affiliates: AffiliateDocument[],
): Promise<Map<string, PlanSummary | null>> {
  const defaultPlanId = await repositories.defaultPlans.of(programId);
  const wanted = new Set(affiliates.map((affiliate) => affiliate.commissionPlanId).filter((id): id is string => Boolean(id)));
  if (defaultPlanId) wanted.add(defaultPlanId);
  const plans = new Map(
    (await repositories.commissionPlans.byIds(programId, [...wanted])).map((plan) => [plan._id, { id: plan._id, name: plan.name }]),
  );
  const fallback = defaultPlanId ? (plans.get(defaultPlanId) ?? null) : null;
  return new Map(
    affiliates.map((affiliate) => [
      affiliate._id,
      (affiliate.commissionPlanId ? plans.get(affiliate.commissionPlanId) : undefined) ?? fallback,
    ]),
  );
}

/** What the sale service computes a commission from: the plan in force and the tier reached on it. */
export async function planInForce(
  repositories: Repositories,
  affiliate: AffiliateDocument,
  options: { recently?: boolean } = {},
): Promise<PlanInForce> {
  const plan = await planOf(repositories, affiliate, options);
  if (!plan) {
    return {
      id: null,
      name: 'Commission rate of the affiliate',
      commissionType: 'PERCENTAGE',
      rate: affiliate.commissionRate,
      currency: null,
      firstPaymentRate: null,
      recurring: 'FOREVER',
      recurringMonths: null,
      holdDays: DEFAULT_HOLD_DAYS,
      minimumPayout: null,
      tierRate: null,
    };
  }
  const reached = affiliate.commissionTier?.planId === plan._id ? affiliate.commissionTier : null;
  // The rate of the tier as the plan says now: a plan changed since the promotion pays its new rate.
  const tier = reached ? plan.tiers.find((rule) => rule.metric === reached.metric && rule.threshold === reached.threshold) : undefined;
  return {
    id: plan._id,
    name: plan.name,
    commissionType: plan.commissionType,
    rate: plan.rate,
    currency: plan.currency,
    firstPaymentRate: plan.firstPaymentRate,
    recurring: plan.recurring,
    recurringMonths: plan.recurringMonths,
    holdDays: plan.holdDays,
    minimumPayout: plan.minimumPayout,
    tierRate: tier?.rate ?? null,
  };
}
