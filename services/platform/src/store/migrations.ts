import type { Connection } from 'mongoose';
import { asUniqueKeyConflict, UniqueKeyConflict } from './unique-keys';

/**
 * Runs a data migration at most until one run has finished, then never again. Replicas start
 * together (a Deployment scaling out, a rolling update), so several may run it at the same time:
 * the migration must be idempotent (rewrite only what is still in the old shape), and the one
 * that records the migration second takes the taken marker as "already done", never as a failure.
 */
export async function runMigrationOnce(connection: Connection, id: string, migrate: () => Promise<void>): Promise<void> {
  const migrations = connection.collection<{ _id: string; at: Date }>('migrations');
  if (await migrations.findOne({ _id: id })) return;
  await migrate();
  try {
    await migrations.insertOne({ _id: id, at: new Date() });
  } catch (error) {
    const conflict = asUniqueKeyConflict(error);
    if (!(conflict instanceof UniqueKeyConflict)) throw conflict;
  }
}
