import 'reflect-metadata';
import { createApp } from './app.factory';
import { loadAppConfig, type AppConfig } from './config/app.config';
import { loadAuthConfig, type AuthConfig } from './config/auth.config';
import { loadSandboxOptions } from './config/sandbox.config';
import { loadUpstreamConfig, type UpstreamConfig } from './config/upstream.config';
import { ConfigValidationError } from './config/validate-env';
import type { SandboxOptions } from './sandbox/sandbox.options';
import { resolveDatabase, type ResolvedDatabase } from './database/database-url';
import { upstreamOptionsFromConfig } from './upstream/upstream.options';
import { resolveUpstreamTarget, type UpstreamTarget } from './upstream/upstream-target';

interface Configs {
  config: AppConfig;
  auth: AuthConfig;
  upstream: UpstreamConfig;
  sandbox: SandboxOptions;
}

/** Validates every configuration class; on any problem prints them all (names only) and exits 2. */
function loadConfigOrExit(): Configs {
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
  const upstream = load(() => loadUpstreamConfig(process.env));
  // SANDBOX_* matter only when the sandbox is the upstream.
  const sandbox = upstream?.usesInProcessSandbox === false ? {} : load(() => loadSandboxOptions(process.env));
  if (config?.isProduction && upstream?.usesInProcessSandbox) {
    problems.push(
      'UPSTREAM_BASE_URL: must be set when NODE_ENV=production (the in-process sandbox is test money)',
    );
  }
  if (!config || !auth || !upstream || !sandbox || problems.length > 0) {
    process.stderr.write(`${new ConfigValidationError(problems).message}\n`);
    process.exit(2);
  }
  return { config, auth, upstream, sandbox };
}

async function main(): Promise<void> {
  const configs = loadConfigOrExit();
  const { config } = configs;
  let database: ResolvedDatabase | null = null;
  let upstream: UpstreamTarget | null = null;
  const releaseResources = async (): Promise<void> => {
    await upstream?.sandbox?.close();
    await database?.embedded?.stop();
  };
  try {
    database = await resolveDatabase(config);
    upstream = await resolveUpstreamTarget(configs.upstream, configs.sandbox);
    const { app, logger } = await createApp({
      config,
      authConfig: configs.auth,
      databaseUrl: database.url,
      upstream: upstreamOptionsFromConfig(configs.upstream, upstream),
    });
    await app.listen(config.PORT, config.HOST);
    logger.info(
      {
        url: await app.getUrl(),
        database: database.embedded ? 'embedded' : 'external',
        upstream: upstream.sandbox ? 'in-process sandbox' : configs.upstream.UPSTREAM_ENVIRONMENT,
      },
      'ticket-resale-bff listening',
    );

    let stopping = false;
    const shutdown = (signal: NodeJS.Signals): void => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'shutting down: draining in-flight requests');
      const force = setTimeout(() => {
        logger.error({ timeoutMs: config.SHUTDOWN_TIMEOUT_MS }, 'shutdown timed out; forcing exit');
        void releaseResources().finally(() => process.exit(1));
      }, config.SHUTDOWN_TIMEOUT_MS);
      force.unref();
      // app.close(): stop accepting, finish in-flight requests, run module destroy hooks (schedulers,
      // upstream agent, pool); then the sandbox and the embedded cluster can stop.
      void app
        .close()
        .then(releaseResources)
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
    await releaseResources();
    process.exit(1);
  }
}

void main();
