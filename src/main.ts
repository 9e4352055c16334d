import 'reflect-metadata';
import { createApp } from './app.factory';
import { loadAppConfig, type AppConfig } from './config/app.config';
import { loadAuthConfig, type AuthConfig } from './config/auth.config';
import { ConfigValidationError } from './config/validate-env';
import { resolveDatabase, type ResolvedDatabase } from './database/database-url';

/** Validates every configuration class; on any problem prints them all (names only) and exits 2. */
function loadConfigOrExit(): { config: AppConfig; auth: AuthConfig } {
  const problems: string[] = [];
  const load = <T>(fn: () => T): T | undefined => {
    try {
      return fn();
    } catch (error) {
      if (!(error instanceof ConfigValidationError)) throw error;
      problems.push(...error.problems);
      return undefined;
    }
  };
  const config = load(() => loadAppConfig(process.env));
  const auth = load(() => loadAuthConfig(process.env));
  if (!config || !auth) {
    process.stderr.write(`${new ConfigValidationError(problems).message}\n`);
    process.exit(2);
  }
  return { config, auth };
}

async function main(): Promise<void> {
  const { config, auth } = loadConfigOrExit();
  let database: ResolvedDatabase | null = null;
  try {
    database = await resolveDatabase(config);
    const { app, logger } = await createApp({ config, authConfig: auth, databaseUrl: database.url });
    await app.listen(config.PORT, config.HOST);
    logger.info(
      { url: await app.getUrl(), database: database.embedded ? 'embedded' : 'external' },
      'ticket-resale-bff listening',
    );

    let stopping = false;
    const shutdown = (signal: NodeJS.Signals): void => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'shutting down: draining in-flight requests');
      const force = setTimeout(() => {
        logger.error({ timeoutMs: config.SHUTDOWN_TIMEOUT_MS }, 'shutdown timed out; forcing exit');
        void database?.embedded?.stop().finally(() => process.exit(1));
      }, config.SHUTDOWN_TIMEOUT_MS);
      force.unref();
      // app.close(): stop accepting, finish in-flight requests, run module destroy hooks
      // (schedulers, pool) - then the embedded cluster can stop.
      void app
        .close()
        .then(() => database?.embedded?.stop())
        .then(() => {
          logger.info('shutdown complete');
          logger.flush();
          process.exit(0);
        })
        .catch((error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        });
    };
    process.once('SIGTERM', shutdown);
    process.once('SIGINT', shutdown);
  } catch (error) {
    process.stderr.write(`startup failed: ${error instanceof Error ? error.message : String(error)}\n`);
    await database?.embedded?.stop();
    process.exit(1);
  }
}

void main();
