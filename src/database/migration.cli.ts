import 'reflect-metadata';
import { loadAppConfig } from '../config/app.config';
import { ConfigValidationError } from '../config/validate-env';
import { createDataSource } from './data-source';
import { withServiceDatabase } from './database-url';
import { migrationStatus } from './migration-status';

const USAGE = 'usage: migration.cli <run|revert|show>';

/**
 * `npm run migration:run|revert|show`: the same data source as the service, against DATABASE_URL or
 * the embedded cluster under DATA_DIR (started for the command when the service is not running it).
 */
async function main(command: string | undefined): Promise<number> {
  if (command !== 'run' && command !== 'revert' && command !== 'show') {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  return withServiceDatabase(
    loadAppConfig(process.env),
    (url) =>
      createDataSource(
        { url, applicationName: 'ticket-resale-bff-migrations' },
        {
          onIndexRepaired: ({ index, action }) =>
            process.stdout.write(`${action} invalid index ${index} (left by an interrupted build)\n`),
        },
      ),
    async (dataSource) => {
      if (command === 'run') {
        const applied = await dataSource.runMigrations({ transaction: 'each' });
        process.stdout.write(
          `applied ${applied.length} migration(s)${applied.map((m) => `\n  ${m.name}`).join('')}\n`,
        );
        return 0;
      }
      if (command === 'revert') {
        await dataSource.undoLastMigration({ transaction: 'each' });
        process.stdout.write('reverted the last migration\n');
        return 0;
      }
      const { applied, pending } = await migrationStatus(dataSource);
      process.stdout.write(
        pending.length > 0
          ? `${pending.length} pending migration(s):${pending.map((n) => `\n  ${n}`).join('')}\n`
          : `all ${applied} migrations are applied\n`,
      );
      return pending.length > 0 ? 1 : 0;
    },
  );
}

main(process.argv[2]).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const message =
      error instanceof ConfigValidationError ? error.message : `migration failed: ${String(error)}`;
    process.stderr.write(`${message}\n`);
    process.exit(1);
  },
);
