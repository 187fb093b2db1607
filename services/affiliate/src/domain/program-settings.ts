import { DEFAULT_PROGRAM_SETTINGS, type ProgramAnnouncement, type ProgramSettings } from '../data-access/programs';
import type { Repositories } from '../data-access/repositories';

/** The program's settings as last announced by the gateway, or the platform defaults before that. */
export async function programSettingsOf(repositories: Repositories, programId: string): Promise<ProgramSettings> {
  return (await repositories.programs.of(programId)) ?? DEFAULT_PROGRAM_SETTINGS;
}

/** `programSettingsOf` for clicks, which every click of the program repeats: possibly a second or two old on another replica. */
export async function recentProgramSettingsOf(repositories: Repositories, programId: string): Promise<ProgramSettings> {
  return (await repositories.programs.recentlyOf(programId)) ?? DEFAULT_PROGRAM_SETTINGS;
}

/** Applies program.created / program.updated; an older event arriving late changes nothing. */
export async function recordProgramSettings(repositories: Repositories, program: ProgramAnnouncement): Promise<void> {
  await repositories.programs.record(program);
}

/** A deleted program stays as a marker, so no late update revives it. */
export async function forgetProgram(repositories: Repositories, programId: string): Promise<void> {
  await repositories.programs.forget(programId);
}
