import type { Program } from '@affiliate/contracts';
import { isDuplicateKey } from '@affiliate/platform';
import type { Models } from '../data-access/models';
import { DEFAULT_PROGRAM_SETTINGS, type ProgramSettings } from '../data-access/programs';

/** The program's settings as last announced by the gateway, or the platform defaults before that. */
export async function programSettingsOf(models: Models, programId: string): Promise<ProgramSettings> {
  const program = await models.programs.findOne({ _id: programId, deleted: false }).lean();
  if (!program) return DEFAULT_PROGRAM_SETTINGS;
  return {
    urlModifier: program.urlModifier,
    destinationUrls: program.destinationUrls,
    requireApproval: program.requireApproval,
    defaultCommissionRate: program.defaultCommissionRate,
  };
}

/**
 * Applies program.created / program.updated. The write only lands when the event is newer than
 * what is stored; an older one fails the filter, its upsert hits the unique _id, and is dropped.
 */
export async function recordProgramSettings(models: Models, program: Program): Promise<void> {
  const updatedAt = new Date(program.updatedAt);
  try {
    await models.programs.updateOne(
      { _id: program.id, sourceUpdatedAt: { $lt: updatedAt } },
      {
        $set: {
          urlModifier: program.urlModifier,
          destinationUrls: program.destinationUrls,
          requireApproval: program.requireApproval,
          defaultCommissionRate: program.defaultCommissionRate,
          sourceUpdatedAt: updatedAt,
          deleted: false,
        },
      },
      { upsert: true },
    );
  } catch (error) {
    if (!isDuplicateKey(error)) throw error;
  }
}

/** A deleted program stays as a marker dated in the far future, so no late update revives it. */
export async function forgetProgram(models: Models, programId: string): Promise<void> {
  await models.programs.updateOne(
    { _id: programId },
    { $set: { deleted: true, sourceUpdatedAt: new Date(8.64e15) }, $setOnInsert: { ...DEFAULT_PROGRAM_SETTINGS } },
    { upsert: true },
  );
}
