import { runMigrationOnce, unlessKeyTaken, UniqueKeyConflict, type Logger } from '@affiliate/platform';
import type { Connection } from 'mongoose';
import { hashPassword } from '../team/passwords';
import { teamMemberModel, type TeamMemberDocument } from '../team/team-members';
import { hashApiKey } from './api-keys';
import type { ProgramRepository } from './program-model';
import { findLiveProgram } from './programs';
import { uuidFromHash } from './retention';

export type BootstrapOwner = { email: string; password: string };

/**
 * BOOTSTRAP_OWNER_EMAIL and BOOTSTRAP_OWNER_PASSWORD: the demo program's OWNER, so that `npm start`
 * leads to a console someone can sign in to. Created once, as the demo key is: the member's id
 * derives from the program and the email, so gateways starting together write the same member and
 * the losers' taken key (UniqueKeyConflict, on the id or the email) means it is there already; a
 * marker (runMigrationOnce) then keeps a later start from bringing back an owner the team removed.
 * A member that exists keeps its password and role: a changed BOOTSTRAP_OWNER_PASSWORD is not applied.
 * The password reaches only the team's argon2id hash, never a log line.
 */
export async function ensureBootstrapOwner(
  connection: Connection,
  programs: ProgramRepository,
  programId: string,
  owner: BootstrapOwner,
  logger: Logger,
): Promise<void> {
  const memberId = `mbr_${uuidFromHash(hashApiKey(`owner:${programId}:${owner.email}`))}`;
  await runMigrationOnce(connection, `bootstrap-owner:${memberId}`, async () => {
    const members = teamMemberModel(connection);
    const existing = await members.findOne({ email: owner.email }).lean<TeamMemberDocument>();
    if (existing) {
      // An email is one member across the gateway: on another program's team it cannot own the demo program too.
      if (existing.programId !== programId)
        logger.warn({ programId }, 'BOOTSTRAP_OWNER_EMAIL is a member of another program: the demo program gets no owner from it');
      return;
    }
    if (!(await findLiveProgram(programs, programId))) {
      logger.warn({ programId }, 'the demo program of BOOTSTRAP_API_KEY was deleted: no owner created for it');
      return;
    }
    const passwordHash = await hashPassword(owner.password);
    const created = await unlessKeyTaken(() =>
      members.create({ _id: memberId, programId, email: owner.email, role: 'OWNER', passwordHash, lastSignInAt: null }),
    );
    if (!(created instanceof UniqueKeyConflict))
      logger.info({ programId, memberId, email: owner.email }, "created the demo program's OWNER for BOOTSTRAP_OWNER_EMAIL");
  });
}
