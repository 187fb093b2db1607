import type { Model } from 'mongoose';
import { AppError, isDuplicateKey } from '../errors';

/**
 * A unique key is already taken (by another document of the program, or by a concurrent write).
 * One typed conflict for every store, aggregate or not: use cases turn it into the message the
 * contract names for that key; one that nobody turns into a message still answers 409, never 500.
 */
export class UniqueKeyConflict extends AppError {
  constructor(readonly key: string) {
    super(409, `${key} is already taken`);
    this.name = 'UniqueKeyConflict';
  }
}

/**
 * The driver's duplicate-key error as the typed conflict, naming the key; any other error as it is.
 * The one place that reads the driver's code, so callers ask `instanceof UniqueKeyConflict`.
 */
export function asUniqueKeyConflict(error: unknown, knownKeys: readonly string[] = []): unknown {
  if (!isDuplicateKey(error)) return error;
  const details = error as { keyPattern?: Record<string, unknown>; keyValue?: Record<string, unknown>; message?: string };
  const named = Object.keys(details.keyPattern ?? details.keyValue ?? {}).find((field) => field !== 'programId');
  const mentioned = knownKeys.find((field) => details.message?.includes(field));
  return new UniqueKeyConflict(named ?? mentioned ?? 'a unique key');
}

/**
 * Runs a write that may find its key taken (the loser of a race to create a document, a second
 * claim of one id): the UniqueKeyConflict comes back as a value, for the callers whose loser has a
 * way on (update the winner's document, read it); any other error is thrown.
 */
export async function unlessKeyTaken<T>(write: () => Promise<T>): Promise<T | UniqueKeyConflict> {
  try {
    return await write();
  } catch (error) {
    const outcome = asUniqueKeyConflict(error);
    if (outcome instanceof UniqueKeyConflict) return outcome;
    throw outcome;
  }
}

/** True when this (per-document) write error is a taken key: a bulk write's losers of a race. */
export const isKeyTaken = (error: unknown): boolean => asUniqueKeyConflict(error) instanceof UniqueKeyConflict;

/**
 * Inserts into a collection that is not an aggregate (no outbox: API keys, claims, records): a
 * taken `_id` or unique key is the same UniqueKeyConflict the aggregate store throws.
 */
export async function insertUnique<Doc>(model: Model<Doc>, document: Partial<Doc>, knownKeys: readonly string[] = []): Promise<Doc> {
  try {
    const created = await model.create(document);
    return created.toObject() as Doc;
  } catch (error) {
    throw asUniqueKeyConflict(error, knownKeys);
  }
}
