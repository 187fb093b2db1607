import { randomUUID } from 'node:crypto';
import { TEAM_INVITE_TTL_SECONDS, type TeamInvite, type TeamMember, type TeamRole } from '@affiliate/contracts';
import { AppError, badRequest, conflict, isDuplicateKey, notFound, unauthorized } from '@affiliate/platform';
import type { Connection } from 'mongoose';
import { hashPassword, passwordMatches } from './passwords';
import {
  byCredential,
  hashOf,
  newMemberId,
  newSecret,
  teamInviteModel,
  teamMemberModel,
  type TeamInviteDocument,
  type TeamInviteModel,
  type TeamMemberDocument,
  type TeamMemberModel,
} from './team-members';
import type { TeamSessions } from './team-sessions';
import { newTotpSecret, totpStepOf } from './totp';

/** Who invited: a member (an OWNER in the console) or the operator (admin API, CLI). */
export type InvitedBy = { memberId: string; email: string } | { operator: true };

/** Why a sign-in is refused; each is a 401 with its own code, and each counts as a failure for throttling. */
export type SignInRefusal = 'credentials_invalid' | 'totp_required' | 'totp_invalid';

export const toTeamMember = (member: TeamMemberDocument): TeamMember => ({
  id: member._id,
  email: member.email,
  role: member.role,
  totpEnabled: member.totpSecret !== null,
  createdAt: member.createdAt.toISOString(),
  lastSignInAt: member.lastSignInAt?.toISOString() ?? null,
});

const toTeamInvite = (invite: TeamInviteDocument): TeamInvite => ({
  id: invite._id,
  email: invite.email,
  role: invite.role,
  expiresAt: invite.expiresAt.toISOString(),
});

const memberMissing = (id: string) => notFound(`No team member or invite with id ${id} in this program`, 'resource_missing');
const memberExists = (email: string) => conflict(`${email} is already a team member`, 'member_exists');
const totpInvalid = () => badRequest("code: not the authenticator app's current code (or one already used)", 'totp_invalid', 'code');
const totpEnabled = () =>
  conflict('The second factor is on: turn it off with a code of your authenticator app first (DELETE /api/v1/team/totp)', 'totp_enabled');
const lastOwner = () => conflict('The program must keep at least one OWNER: make another member OWNER first', 'last_owner');

/**
 * The team of each program (issue 32): invites, members, their passwords and second factor. Every
 * method but the two that start from a credential (an invite's token, a sign-in's email) takes the
 * program, and reads and writes only in it.
 */
export class TeamAccounts {
  private readonly members: TeamMemberModel;
  private readonly invites: TeamInviteModel;

  constructor(
    connection: Connection,
    private readonly sessions: TeamSessions,
    private readonly inviteTtlMs: number = TEAM_INVITE_TTL_SECONDS * 1000,
  ) {
    this.members = teamMemberModel(connection);
    this.invites = teamInviteModel(connection);
  }

  /**
   * A single-use invite; its token (`<id>.<secret>`) is returned once and only its hash kept. A newer
   * invite of the same email to the same program withdraws the older ones, so one link at most works.
   * Only this program's members are looked at: an address that is another program's member gets an
   * invite like any other (answering 409 would tell this program's OWNER who is on another program's
   * team), and the acceptance is refused (accept), where the person who owns the address learns it.
   */
  async invite(
    programId: string,
    body: { email: string; role: TeamRole },
    invitedBy: InvitedBy,
  ): Promise<{ invite: TeamInvite; token: string }> {
    if (await this.members.exists({ email: body.email, programId }))
      throw conflict(`${body.email} is already a team member; change their role instead`, 'member_exists');
    const id = randomUUID();
    const secret = newSecret();
    const now = new Date();
    await this.invites.updateMany({ programId, email: body.email, acceptedAt: null, revokedAt: null }, { $set: { revokedAt: now } });
    const created = await this.invites.create({
      _id: id,
      programId,
      email: body.email,
      role: body.role,
      tokenHash: hashOf(secret),
      expiresAt: new Date(now.getTime() + this.inviteTtlMs),
      invitedBy,
    });
    return { invite: toTeamInvite(created.toObject()), token: `${id}.${secret}` };
  }

  /** The program's members in the order they joined, and its invites still open. */
  async list(programId: string): Promise<{ members: TeamMember[]; invites: TeamInvite[] }> {
    const [members, invites] = await Promise.all([
      this.members.find({ programId }).sort({ createdAt: 1, _id: 1 }).lean<TeamMemberDocument[]>(),
      this.invites
        .find({ programId, acceptedAt: null, revokedAt: null, expiresAt: { $gt: new Date() } })
        .sort({ createdAt: 1, _id: 1 })
        .lean<TeamInviteDocument[]>(),
    ]);
    return { members: members.map(toTeamMember), invites: invites.map(toTeamInvite) };
  }

  /** The invite a token names while it can be accepted; refused 401 (never issued) or 410 (used, withdrawn, expired), each with its own code. */
  async acceptable(token: string): Promise<TeamInviteDocument> {
    const invite = await byCredential(this.invites, token, 'tokenHash');
    if (!invite) throw unauthorized('This invite link is not valid: ask an OWNER of the program for a new one', 'invite_invalid');
    if (invite.revokedAt && !invite.acceptedAt)
      throw new AppError(
        410,
        'This invite link was withdrawn (an OWNER removed it or invited the address again): ask an OWNER for a new one',
        { code: 'invite_revoked' },
      );
    if (invite.acceptedAt)
      throw new AppError(410, 'This invite link has already been used: each link works once. Ask an OWNER for a new one', {
        code: 'invite_used',
      });
    if (invite.expiresAt.getTime() <= Date.now())
      throw new AppError(410, 'This invite link has expired (links work for 72 hours): ask an OWNER for a new one', {
        code: 'invite_expired',
      });
    return invite;
  }

  /**
   * Accepts an invite: one conditional write, which only the first of any number of concurrent
   * acceptances wins (the loser is told the link was used), then the member with the password's hash.
   */
  async accept(invite: TeamInviteDocument, password: string): Promise<TeamMemberDocument> {
    // An address that is already a member (of any program: an email is one member across the gateway)
    // is refused before the invite is spent; the unique index below still decides a race.
    if (await this.members.exists({ email: invite.email })) throw memberExists(invite.email);
    const passwordHash = await hashPassword(password);
    const memberId = newMemberId();
    const now = new Date();
    const claimed = await this.invites.updateOne(
      { _id: invite._id, programId: invite.programId, acceptedAt: null, revokedAt: null, expiresAt: { $gt: now } },
      { $set: { acceptedAt: now, memberId } },
    );
    if (claimed.modifiedCount !== 1)
      throw new AppError(410, 'This invite link has already been used: each link works once. Ask an OWNER for a new one', {
        code: 'invite_used',
      });
    try {
      const created = await this.members.create({
        _id: memberId,
        programId: invite.programId,
        email: invite.email,
        role: invite.role,
        passwordHash,
        lastSignInAt: now,
      });
      return created.toObject();
    } catch (error) {
      if (isDuplicateKey(error)) throw memberExists(invite.email);
      throw error;
    }
  }

  /** The member of this email and password (and TOTP code when on), or why not: the same refusal for an unknown email and a wrong password. */
  async signIn(email: string, password: string, totpCode: string | undefined): Promise<TeamMemberDocument | SignInRefusal> {
    const member = await this.members.findOne({ email }).lean<TeamMemberDocument>();
    if (!(await passwordMatches(member?.passwordHash ?? null, password)) || !member) return 'credentials_invalid';
    if (member.totpSecret) {
      if (!totpCode) return 'totp_required';
      if (!(await this.spendTotpCode(member, member.totpSecret, totpCode))) return 'totp_invalid';
    }
    await this.members.updateOne({ _id: member._id }, { $set: { lastSignInAt: new Date() } });
    return member;
  }

  async member(programId: string, memberId: string): Promise<TeamMemberDocument> {
    // A point read on _id (DESIGN.md §8); another program's member is as missing as one that never was.
    const member = await this.members.findOne({ _id: memberId }).lean<TeamMemberDocument>();
    if (!member || member.programId !== programId) throw memberMissing(memberId);
    return member;
  }

  /**
   * A new role; the member's sessions end, so the new role applies from their next sign-in. The last
   * OWNER keeps the role: checked before, and again after the write, which is undone if two owners
   * were demoted at once and none is left.
   */
  async changeRole(programId: string, memberId: string, role: TeamRole): Promise<{ member: TeamMember; previousRole: TeamRole }> {
    const member = await this.member(programId, memberId);
    if (member.role === role) return { member: toTeamMember(member), previousRole: role };
    if (member.role === 'OWNER' && (await this.ownerCount(programId)) <= 1) throw lastOwner();
    await this.members.updateOne({ _id: memberId, programId }, { $set: { role } });
    if (member.role === 'OWNER' && (await this.ownerCount(programId)) === 0) {
      await this.members.updateOne({ _id: memberId, programId }, { $set: { role: 'OWNER' } });
      throw lastOwner();
    }
    await this.sessions.revokeAllOf(programId, memberId);
    return { member: toTeamMember({ ...member, role }), previousRole: member.role };
  }

  /** Removes a member (their sessions end) or withdraws an open invite; the last OWNER stays, as in changeRole. */
  async remove(programId: string, id: string): Promise<{ removed: { email: string; role: TeamRole; kind: 'member' | 'invite' } }> {
    if (!id.startsWith('mbr_')) {
      const invite = await this.invites.findOne({ _id: id }).lean<TeamInviteDocument>();
      if (!invite || invite.programId !== programId) throw memberMissing(id);
      // The conditional write decides: an invite accepted or withdrawn meanwhile is no longer open.
      const withdrawn = await this.invites.updateOne({ _id: id, acceptedAt: null, revokedAt: null }, { $set: { revokedAt: new Date() } });
      if (withdrawn.modifiedCount !== 1) throw memberMissing(id);
      return { removed: { email: invite.email, role: invite.role, kind: 'invite' } };
    }
    const member = await this.member(programId, id);
    if (member.role === 'OWNER' && (await this.ownerCount(programId)) <= 1) throw lastOwner();
    const deleted = await this.members.deleteOne({ _id: id, programId });
    if (deleted.deletedCount !== 1) throw memberMissing(id);
    if (member.role === 'OWNER' && (await this.ownerCount(programId)) === 0) {
      await this.members.create(member);
      throw lastOwner();
    }
    await this.sessions.revokeAllOf(programId, id);
    return { removed: { email: member.email, role: member.role, kind: 'member' } };
  }

  /**
   * A new secret to confirm; sign-in ignores it until then, and a second start replaces it. Refused
   * while the second factor is on (GitHub's and Stripe's rule): a session alone, without a code of the
   * app, must not replace the factor; the member turns it off with a code first (disableTotp).
   */
  async startTotp(programId: string, memberId: string): Promise<{ secret: string; otpauthUrl: string }> {
    const member = await this.member(programId, memberId);
    if (member.totpSecret) throw totpEnabled();
    const enrolment = newTotpSecret(member.email);
    await this.members.updateOne({ _id: memberId, programId }, { $set: { totpPendingSecret: enrolment.secret } });
    return enrolment;
  }

  async confirmTotp(programId: string, memberId: string, code: string): Promise<void> {
    const member = await this.member(programId, memberId);
    if (member.totpSecret) throw totpEnabled();
    if (!member.totpPendingSecret)
      throw badRequest('No authenticator secret to confirm: start with POST /api/v1/team/totp', 'totp_enrolment_missing');
    const step = totpStepOf(member.totpPendingSecret, code);
    if (step === null) throw totpInvalid();
    // The code that confirmed is spent: sign-in asks for a later one.
    await this.members.updateOne(
      { _id: memberId, programId, totpPendingSecret: member.totpPendingSecret, totpSecret: null },
      { $set: { totpSecret: member.totpPendingSecret, totpPendingSecret: null, totpLastStep: step } },
    );
  }

  async disableTotp(programId: string, memberId: string, code: string): Promise<void> {
    const member = await this.member(programId, memberId);
    if (member.totpSecret && !(await this.spendTotpCode(member, member.totpSecret, code))) throw totpInvalid();
    await this.members.updateOne({ _id: memberId, programId }, { $set: { totpSecret: null, totpPendingSecret: null } });
  }

  /**
   * Whether the code is right and of a time step after the last one accepted, which it then becomes:
   * one conditional write, so of two requests with the same code (a replay, or a code seen over a
   * shoulder) only one passes (RFC 6238 §5.2).
   */
  private async spendTotpCode(member: TeamMemberDocument, secret: string, code: string): Promise<boolean> {
    const step = totpStepOf(secret, code);
    if (step === null) return false;
    const spent = await this.members.updateOne(
      { _id: member._id, programId: member.programId, totpSecret: secret, $or: [{ totpLastStep: null }, { totpLastStep: { $lt: step } }] },
      { $set: { totpLastStep: step } },
    );
    return spent.modifiedCount === 1;
  }

  /**
   * A deleted program's team goes with it: its members (whose addresses may then join another program),
   * its open invites and every session. The operator's DELETE /admin/v1/programs/{id} calls it.
   */
  async releaseProgram(programId: string): Promise<void> {
    await this.invites.updateMany({ programId, acceptedAt: null, revokedAt: null }, { $set: { revokedAt: new Date() } });
    await this.sessions.revokeProgram(programId);
    await this.members.deleteMany({ programId });
  }

  private ownerCount(programId: string): Promise<number> {
    return this.members.countDocuments({ programId, role: 'OWNER' });
  }
}
