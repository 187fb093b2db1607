import type { OperationId } from './operation-descriptions';
import { DateTime, Email, Uuid } from './common';
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

/** How long an invite link can be accepted (issue 32: a single-use link shown to the owner). */
export const TEAM_INVITE_TTL_SECONDS = 72 * 3600;

/** OWASP's and NIST SP 800-63B's bounds: at least 12 characters, at most 128 (argon2 hashes any length, but a bound keeps a request cheap). */
export const TEAM_PASSWORD_MIN_LENGTH = 12;
export const TEAM_PASSWORD_MAX_LENGTH = 128;

/** A member's id: `mbr_` and a UUID, told apart from an API key's id wherever the audit record names who acted. */
export const TeamMemberId = z
  .string()
  .regex(/^mbr_[0-9a-f-]{36}$/, 'must be a member id (mbr_…)')
  .openapi({ description: "A team member's id (mbr_…)", example: 'mbr_9f1c2d3e-4b5a-4c6d-8e7f-001122334455' });

const MemberEmail = Email.transform((email) => email.toLowerCase()).openapi({
  description: 'The email the member signs in with (compared without regard to case)',
  example: 'ada@example.com',
});

export const TeamMember = z
  .object({
    id: TeamMemberId,
    email: z.string().openapi({ description: 'The email the member signs in with (lower-cased)' }),
    role: TeamRole,
    totpEnabled: z.boolean().openapi({ description: 'Whether sign-in also asks a code of an authenticator app (TOTP)' }),
    createdAt: DateTime.openapi({ description: 'When the member accepted the invite' }),
    lastSignInAt: DateTime.nullable().openapi({ description: 'The last sign-in; null: never since the invite was accepted' }),
  })
  .openapi('TeamMember', { description: "A person on the program's team, who signs in to the console as themselves" });
export type TeamMember = z.infer<typeof TeamMember>;

export const TeamInvite = z
  .object({
    id: Uuid.openapi({ description: "The invite's id" }),
    email: z.string().openapi({ description: 'Who is invited (lower-cased)' }),
    role: TeamRole,
    expiresAt: DateTime.openapi({ description: 'Until when the link can be accepted (72 hours after it was made)' }),
  })
  .openapi('TeamInvite', { description: 'An invite not accepted yet' });
export type TeamInvite = z.infer<typeof TeamInvite>;

export const TeamInviteCreated = z
  .object({
    invite: TeamInvite,
    inviteUrl: z.string().openapi({
      description:
        'The single-use link to give the person (there is no mail service): the console page where they choose a password. Shown this once; the token is in the fragment, which browsers never send to a server',
    }),
  })
  .openapi('TeamInviteCreated');

export const TeamMembers = z
  .object({
    members: z.array(TeamMember).openapi({ description: 'Every member, in the order they joined' }),
    invites: z.array(TeamInvite).openapi({ description: 'Invites neither accepted nor expired, oldest first' }),
  })
  .openapi('TeamMembers');

export const TeamSession = z
  .object({
    member: TeamMember,
    program: z
      .object({
        id: Uuid.openapi({ description: "The program's id" }),
        name: z.string().openapi({ description: "The program's name" }),
      })
      .openapi({ description: 'The program the member belongs to: every request of the session acts on it alone' }),
    csrfToken: z.string().openapi({ description: 'Send it as X-CSRF-Token on every request of this session that is not a GET or HEAD' }),
    allowedOperations: z.array(z.string()).openapi({
      description:
        "The operations (operationId) the member's role may make: every public operation its role allows, and the team operations it may make. The console shows only their buttons; the gateway refuses the others all the same",
    }),
    idleExpiresAt: DateTime.openapi({ description: 'The session ends here unless a request comes first (each request moves it on)' }),
    expiresAt: DateTime.openapi({ description: 'The session ends here at the latest, whatever the activity' }),
  })
  .openapi('TeamSession', {
    description: "A member's console session; the session itself is the httpOnly cookie __Host-affiliate_console_session",
  });
export type TeamSession = z.infer<typeof TeamSession>;

export const SignInBody = z
  .object({
    email: MemberEmail,
    password: z.string().max(TEAM_PASSWORD_MAX_LENGTH).openapi({ description: 'The password chosen when the invite was accepted' }),
    totpCode: z
      .string()
      .regex(/^\d{6}$/, 'must be the 6 digits of the authenticator app')
      .optional()
      .openapi({ description: "The authenticator app's current code, when the member turned TOTP on" }),
  })
  .strict()
  .openapi('SignInBody');

export const TeamPassword = z
  .string()
  .min(TEAM_PASSWORD_MIN_LENGTH, `must be at least ${TEAM_PASSWORD_MIN_LENGTH} characters`)
  .max(TEAM_PASSWORD_MAX_LENGTH, `must be at most ${TEAM_PASSWORD_MAX_LENGTH} characters`)
  .openapi({ description: `The password to sign in with: ${TEAM_PASSWORD_MIN_LENGTH} to ${TEAM_PASSWORD_MAX_LENGTH} characters` });

export const AcceptInviteBody = z
  .object({
    token: z.string().max(200).openapi({ description: 'The token of the invite link (after `token=` in its fragment)' }),
    password: TeamPassword,
  })
  .strict()
  .openapi('AcceptInviteBody');

export const InviteMemberBody = z.object({ email: MemberEmail, role: TeamRole }).strict().openapi('InviteMemberBody');

export const ChangeMemberRoleBody = z.object({ id: TeamMemberId, role: TeamRole }).strict().openapi('ChangeMemberRoleBody');

export const RemoveMemberBody = z
  .object({
    id: z.string().max(100).openapi({
      description: "A member's id (mbr_…), or a pending invite's id to withdraw it",
      example: 'mbr_9f1c2d3e-4b5a-4c6d-8e7f-001122334455',
    }),
  })
  .strict()
  .openapi('RemoveMemberBody');

export const TotpEnrolment = z
  .object({
    secret: z.string().openapi({ description: 'The shared secret (base32), for an app that cannot read the URL' }),
    otpauthUrl: z.string().openapi({ description: 'otpauth://totp/… URL, as a QR code for the authenticator app' }),
  })
  .openapi('TotpEnrolment', {
    description: 'Confirm with PUT /api/v1/team/totp and a code of the app; until then sign-in does not ask for one',
  });

export const TotpCodeBody = z
  .object({
    code: z
      .string()
      .regex(/^\d{6}$/, 'must be the 6 digits of the authenticator app')
      .openapi({ description: "The authenticator app's current code" }),
  })
  .strict()
  .openapi('TotpCodeBody');

export const RevokeApiKeyBody = z
  .object({ id: Uuid.openapi({ description: 'The key to revoke' }) })
  .strict()
  .openapi('RevokeApiKeyBody');

export const TotpStatus = z
  .object({ totpEnabled: z.boolean().openapi({ description: 'Whether sign-in asks for a code of the app' }) })
  .openapi('TotpStatus');
