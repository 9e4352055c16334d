import 'reflect-metadata';
import { loadAppConfig } from '../config/app.config';
import { ConfigValidationError } from '../config/validate-env';
import { createDataSource } from './data-source';
import { resolveDatabase } from './database-url';

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
  const config = loadAppConfig(process.env);
  const database = await resolveDatabase(config);
  const dataSource = createDataSource({ url: database.url });
  try {
    await dataSource.initialize();
    if (command === 'run') {
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      process.stdout.write(
        `applied ${applied.length} migration(s)${applied.map((m) => `\n  ${m.name}`).join('')}\n`,
      );
    } else if (command === 'revert') {
      await dataSource.undoLastMigration({ transaction: 'each' });
      process.stdout.write('reverted the last migration\n');
    } else {
      const rows: { name: string }[] = await dataSource.query('SELECT name FROM migrations').catch(() => []); // no migrations table yet: nothing applied
      const applied = new Set(rows.map((r) => r.name));
      const pending = dataSource.migrations
        .map((m) => m.name ?? m.constructor.name)
        .filter((n) => !applied.has(n));
      process.stdout.write(
        pending.length > 0
          ? `${pending.length} pending migration(s):${pending.map((n) => `\n  ${n}`).join('')}\n`
          : `all ${applied.size} migrations are applied\n`,
      );
      return pending.length > 0 ? 1 : 0;
    }
    return 0;
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await database.embedded?.stop();
  }
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
