import { randomUUID } from 'node:crypto';
import { TRACKING_DEFAULTS, type CreateProgramBody, type Program, type UpdateProgramBody } from '@affiliate/contracts';
import { badRequest, createEvent, notFound, UniqueKeyConflict, type PageRequest } from '@affiliate/platform';
import { slugKeyOf, toProgram, type ProgramDocument, type ProgramRepository } from './program-model';

/** Every program change is one write carrying its program.* event, relayed to the services that keep program settings. */
export async function createProgram(programs: ProgramRepository, body: CreateProgramBody, id: string = randomUUID()): Promise<Program> {
  const now = new Date();
  const fields = {
    _id: id,
    ...TRACKING_DEFAULTS,
    ...body,
    rateLimit: body.rateLimit ?? null,
    slugKey: slugKeyOf(id, body.slug),
    createdAt: now,
    updatedAt: now,
  } as ProgramDocument;
  const program = toProgram(fields);
  await slugTaken(body.slug, () => programs.insert(fields, () => [createEvent('program.created', id, program)]));
  return program;
}

export async function getProgram(programs: ProgramRepository, id: string): Promise<Program> {
  const document = await programs.byId(id, id);
  if (!document) throw programNotFound(id);
  return toProgram(document);
}

export async function listPrograms(
  programs: ProgramRepository,
  page: PageRequest,
): Promise<{ items: Program[]; nextCursor: string | null }> {
  const { items, nextCursor } = await programs.listAcrossPrograms(page);
  return { items: items.map(toProgram), nextCursor };
}

export async function updateProgram(programs: ProgramRepository, id: string, changes: UpdateProgramBody): Promise<Program> {
  const slug = changes.slug === undefined ? {} : { slugKey: slugKeyOf(id, changes.slug) };
  const stored = await slugTaken(changes.slug, () =>
    programs.change(id, id, () => ({
      set: { ...changes, ...slug, updatedAt: new Date() } as Partial<ProgramDocument>,
      events: (next) => [createEvent('program.updated', id, toProgram(next))],
    })),
  );
  if (!stored) throw programNotFound(id);
  return toProgram(stored);
}

/** The program disappears from the API at once; its keys then answer 404, as the spec requires. */
export async function deleteProgram(programs: ProgramRepository, id: string): Promise<{ id: string; deleted: true }> {
  const stored = await programs.remove(id, id, () => [createEvent('program.deleted', id, { id })]);
  if (!stored) throw programNotFound(id);
  return { id, deleted: true };
}

export async function findLiveProgram(programs: ProgramRepository, id: string): Promise<ProgramDocument | null> {
  return programs.byId(id, id);
}

/** A slug is public and one per platform: another program's is a 400 naming it, and nothing changes. */
async function slugTaken<T>(slug: string | null | undefined, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof UniqueKeyConflict && slug)
      throw badRequest(`slug: ${slug} is already taken by another program; choose another`, 'slug_taken', 'slug');
    throw error;
  }
}

const programNotFound = (id: string) => notFound(`No program with id ${id}`);
