import type { OperationId } from './operation-descriptions';
import type { ApiScope } from './program';
import { z } from './zod';

/**
 * A program's team in the console (issue 32, DESIGN.md §11 "Team member session"), as Stripe's
 * dashboard roles: OWNER everything, including members, keys and program settings; ADMIN everything
 * except members and keys; FINANCE payouts, the commissions review queue and reports, read-only
 * elsewhere; ANALYST read-only. The gateway enforces this table on every request a member's session
 * makes; the console reads the same table only to leave out the buttons a role cannot use.
 */
export const TEAM_ROLES = ['OWNER', 'ADMIN', 'FINANCE', 'ANALYST'] as const;
export const TeamRole = z.enum(TEAM_ROLES).openapi('TeamRole', {
  description:
    'OWNER: everything, including members, keys and program settings; ADMIN: everything except members and keys; FINANCE: payouts, the commissions review queue and reports, read-only elsewhere; ANALYST: read-only',
});
export type TeamRole = z.infer<typeof TeamRole>;

/** The API scopes a member's session holds, by role: the same scopes a restricted API key holds. */
export const TEAM_ROLE_SCOPES: Record<TeamRole, readonly ApiScope[]> = {
  OWNER: ['read', 'write', 'finance', 'webhook_secrets'],
  ADMIN: ['read', 'write', 'finance', 'webhook_secrets'],
  FINANCE: ['read', 'finance'],
  ANALYST: ['read'],
};

/** Changes FINANCE makes although they need the `write` scope: deciding the commissions review queue. */
export const FINANCE_WRITE_OPERATIONS: readonly OperationId[] = ['releaseCommission', 'voidCommission'];

/** The public operations that manage keys: OWNER only, although an API key with `write` may call them. */
export const KEY_OPERATIONS: readonly OperationId[] = ['createPublishableKey', 'revokePublishableKey'];

/** What a role is judged on: an operation's id and the scopes it needs (scopesOf in openapi.ts). */
export type RoleJudged = { operationId: OperationId; scopes: readonly ApiScope[] };

/** Whether a member of this role may make this public operation: the one rule the gateway enforces and the console follows. */
export function roleAllows(role: TeamRole, operation: RoleJudged): boolean {
  if (KEY_OPERATIONS.includes(operation.operationId)) return role === 'OWNER';
  const held = new Set<ApiScope>(TEAM_ROLE_SCOPES[role]);
  if (role === 'FINANCE' && FINANCE_WRITE_OPERATIONS.includes(operation.operationId)) held.add('write');
  return operation.scopes.every((scope) => held.has(scope));
}
