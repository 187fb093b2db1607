import { randomUUID } from 'node:crypto';
import type { TeamRole } from '@affiliate/contracts';
import { Schema, type Connection, type Model } from 'mongoose';

/**
 * A program's team members (issue 32, DESIGN.md §11): people who sign in to the console with an email
 * and a password, each with a role. An email is one member across the gateway (the sign-in form asks
 * no program), so a person on two programs' teams uses two addresses. Only an argon2id hash of the
 * password is kept, and the TOTP secret only once the member turned the second factor on.
 */
export type TeamMemberDocument = {
  /** `mbr_<uuid>`: told apart from an API key's id wherever the audit record names who acted. */
  _id: string;
  programId: string;
  /** Lower-cased, so that the sign-in form finds the member however the address was typed. */
  email: string;
  role: TeamRole;
  passwordHash: string;
  /** The confirmed TOTP secret (base32), or null when the second factor is off. */
  totpSecret: string | null;
  /** A secret shown by POST /team/totp and not confirmed yet: sign-in ignores it. */
  totpPendingSecret: string | null;
  /** The last TOTP time step a code was accepted for: a code of that step or an earlier one is refused (RFC 6238 §5.2). */
  totpLastStep: number | null;
  createdAt: Date;
  lastSignInAt: Date | null;
};

const memberSchema = new Schema<TeamMemberDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    email: { type: String, required: true },
    role: { type: String, required: true },
    passwordHash: { type: String, required: true },
    totpSecret: { type: String, default: null },
    totpPendingSecret: { type: String, default: null },
    totpLastStep: { type: Number, default: null },
    lastSignInAt: { type: Date, default: null },
  },
  { collection: 'team_members', timestamps: { createdAt: true, updatedAt: false }, versionKey: false },
);
// Sign-in finds the member by email alone; unique, so that two acceptances of invites for one address cannot both make a member.
memberSchema.index({ email: 1 }, { unique: true });
// The team list and the last-owner count read a program's members.
memberSchema.index({ programId: 1, createdAt: 1 });

export type TeamMemberModel = Model<TeamMemberDocument>;

export const teamMemberModel = (connection: Connection): TeamMemberModel =>
  (connection.models.TeamMember as TeamMemberModel | undefined) ?? connection.model<TeamMemberDocument>('TeamMember', memberSchema);

/** A single-use invite: the link carries `<id>.<secret>`, of which only a hash of the secret is kept. */
export type TeamInviteDocument = {
  _id: string;
  programId: string;
  email: string;
  role: TeamRole;
  tokenHash: string;
  expiresAt: Date;
  /** Set once, by the one acceptance that won: a second acceptance finds it set. */
  acceptedAt: Date | null;
  memberId: string | null;
  /** Withdrawn by an owner (or replaced by a newer invite for the same address). */
  revokedAt: Date | null;
  /** Who invited: a member of the team, or the operator (the admin API or CLI). */
  invitedBy: { memberId: string; email: string } | { operator: true };
  createdAt: Date;
};

const inviteSchema = new Schema<TeamInviteDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    email: { type: String, required: true },
    role: { type: String, required: true },
    tokenHash: { type: String, required: true },
    expiresAt: { type: Date, required: true },
    acceptedAt: { type: Date, default: null },
    memberId: { type: String, default: null },
    revokedAt: { type: Date, default: null },
    invitedBy: { type: Schema.Types.Mixed, required: true },
  },
  { collection: 'team_invites', timestamps: { createdAt: true, updatedAt: false }, versionKey: false },
);
// The team list shows a program's pending invites.
inviteSchema.index({ programId: 1, createdAt: 1 });

export type TeamInviteModel = Model<TeamInviteDocument>;

export const teamInviteModel = (connection: Connection): TeamInviteModel =>
  (connection.models.TeamInvite as TeamInviteModel | undefined) ?? connection.model<TeamInviteDocument>('TeamInvite', inviteSchema);

export { byCredential, hashOf, newSecret } from '../browser/session-credentials';
export const newMemberId = () => `mbr_${randomUUID()}`;
