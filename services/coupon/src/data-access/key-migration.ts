import { programKey, runMigrationOnce, unlessKeyTaken } from '@affiliate/platform';
import type { Connection } from 'mongoose';
import { redemptionIdOf } from './redemption-model';

const MIGRATION_ID = 'program-embedding-keys';
const PLACEHOLDER = /^(none|deleted):/;

/**
 * Before the aggregate store (issue 13), codes and externalIds were unique per (programId, key)
 * compound and redemptions had random ids. Every unique key now embeds its program in one field
 * (AggregateStore.byKey), so a lookup is one exact match. Data written before is rewritten once,
 * before the new single-field unique indexes are built (they would refuse two programs' `SPRING`).
 * It reads every document once, at the first start of the new version only; replicas starting
 * together may each run it, so it rewrites only what is still in the old shape.
 */
export function migrateToProgramKeys(connection: Connection): Promise<void> {
  return runMigrationOnce(connection, MIGRATION_ID, () => rewriteKeys(connection));
}

async function rewriteKeys(connection: Connection): Promise<void> {
  for (const [name, fields] of [
    ['coupons', ['externalIdKey']],
    ['promotional_codes', ['codeKey', 'externalIdKey']],
  ] as const) {
    const collection = connection.collection(name);
    for await (const document of collection.find({}, { projection: { programId: 1, codeKey: 1, externalIdKey: 1 } })) {
      const set: Record<string, string> = {};
      for (const field of fields) {
        const key = document[field] as unknown;
        const prefix = `${String(document.programId)}:`;
        if (typeof key === 'string' && !PLACEHOLDER.test(key) && !key.startsWith(prefix))
          set[field] = programKey(String(document.programId), key);
      }
      if (Object.keys(set).length > 0) await collection.updateOne({ _id: document._id }, { $set: set });
    }
  }
  const redemptions = connection.collection<{ _id: string; programId: string; redemptionKey: string }>('redemptions');
  for await (const redemption of redemptions.find({})) {
    const id = redemptionIdOf(redemption.programId, redemption.redemptionKey);
    if (redemption._id === id) continue;
    // A taken id means an interrupted run already copied it; any other error (a timeout, a lost
    // connection) is thrown before the original is deleted, so no redemption is lost uncopied.
    await unlessKeyTaken(() => redemptions.insertOne({ ...redemption, _id: id }));
    await redemptions.deleteOne({ _id: redemption._id });
  }
}
