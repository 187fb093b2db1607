import { migrateSlugKeys } from '../admin/program-model';
import { ConfigError, connectMongo, createLogger, syncIndexes } from '@affiliate/platform';
import { createAdminStore } from '../admin/api-keys';
import { gatewaySettingsFromEnv } from '../config';
import { TeamAccounts } from '../team/team-accounts';
import { TeamSessions } from '../team/team-sessions';
import { ADMIN_USAGE, describeFailure, runAdminCommand, UsageError } from './admin-commands';

/**
 * `npm run admin -- <command>`: works on the gateway's database directly, so it also works before
 * the gateway runs. Program events are queued in the same write; the gateway's outbox relay
 * publishes them (within its sweep interval, a minute, if it is running; otherwise when it starts).
 */
async function main(argv: string[]): Promise<number> {
  if (argv.length === 0 || argv[0] === 'help' || argv.includes('--help')) {
    process.stdout.write(ADMIN_USAGE);
    return argv.length === 0 ? 64 : 0;
  }
  const settings = gatewaySettingsFromEnv();
  const logger = createLogger('gateway-admin', process.env.LOG_LEVEL ?? 'error');
  const connection = await connectMongo({ url: settings.mongoUrl, dbName: settings.dbName, logger, maxAttempts: 3 });
  try {
    const store = createAdminStore({ connection }, settings.auditRetentionMs);
    await migrateSlugKeys(connection);
    await syncIndexes(connection);
    const team = new TeamAccounts(connection, new TeamSessions(connection));
    const result = await runAdminCommand(argv, store, team);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (error) {
    process.stderr.write(`${describeFailure(error)}\n`);
    return error instanceof UsageError ? 64 : 1;
  } finally {
    await connection.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${describeFailure(error)}\n`);
    process.exit(error instanceof ConfigError ? 78 : 1); // EX_CONFIG, as every process of the platform
  },
);
