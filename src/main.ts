import 'reflect-metadata';
import { setTimeout as delay } from 'node:timers/promises';
import { beginDrain, createApp } from './app.factory';
import { heapLimitMb, heapWarnings } from './common/node-flags';
import { ConfigValidationError } from './config/validate-env';
import { resolveDatabase, type ResolvedDatabase } from './database/database-url';
import { flushTracingWithin } from './tracing/tracing';
import { upstreamOptionsFromConfig } from './upstream/upstream.options';
import {
  loadStartupConfig,
  resolveUpstreamTarget,
  type StartupConfig,
  type UpstreamTarget,
} from './upstream-target';

/** Validates all configuration; on any problem prints every one (names only) and exits 2. */
function loadConfigOrExit(): StartupConfig {
  try {
    return loadStartupConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigValidationError)) throw error;
    process.stderr.write(`${error.message}\n`);
    return process.exit(2);
  }
}

async function main(): Promise<void> {
  const configs = loadConfigOrExit();
  const config = configs.app;
  let database: ResolvedDatabase | null = null;
  let upstream: UpstreamTarget | null = null;
  const releaseResources = async (): Promise<void> => {
    await upstream?.sandbox?.close();
    await database?.embedded?.stop();
  };
  try {
    database = await resolveDatabase(config);
    upstream = await resolveUpstreamTarget(configs.upstream, configs.sandboxOptions);
    const { app, logger } = await createApp({
      config,
      authConfig: configs.auth,
      transactionsConfig: configs.transactions,
      syncConfig: configs.sync,
      checkoutConfig: configs.checkout,
      listingsConfig: configs.listings,
      webhooksConfig: configs.webhooks,
      databaseUrl: database.url,
      upstream: upstreamOptionsFromConfig(configs.upstream, upstream),
    });
    await app.listen(config.PORT, config.HOST);
    const heapMb = heapLimitMb();
    logger.info(
      {
        url: await app.getUrl(),
        database: database.embedded ? 'embedded' : 'external',
        upstream: upstream.sandbox ? 'in-process sandbox' : configs.upstream.UPSTREAM_ENVIRONMENT,
        // The demo sandbox's own address (its /__sandbox admin API is what the README walkthrough uses).
        ...(upstream.sandbox ? { sandboxUrl: upstream.sandbox.url } : {}),
        heapLimitMb: heapMb,
      },
      'ticket-resale-bff listening',
    );
    for (const warning of heapWarnings(heapMb, configs.listings.LISTINGS_CACHE_MAX_BYTES)) {
      logger.warn({ heapLimitMb: heapMb }, warning);
    }

    let stopping = false;
    const shutdown = (signal: NodeJS.Signals): void => {
      if (stopping) return;
      stopping = true;
      const startedAt = performance.now();
      // Rolling deploys (docs/DEPLOY.md): on SIGTERM readiness fails at once while every other route keeps
      // serving (answers say `Connection: close`) for the drain delay, so the balancer stops routing here
      // before the listener goes away. Background work claims nothing new meanwhile: nothing claimed late in
      // the drain is still in an upstream call when the close begins. SIGINT is a terminal's Ctrl-C: no
      // balancer to wait for.
      beginDrain(app);
      const drainMs = signal === 'SIGTERM' ? config.SHUTDOWN_DRAIN_DELAY_MS : 0;
      logger.info({ signal, drainMs }, 'shutting down: readiness fails, draining before close');
      const force = setTimeout(() => {
        logger.error({ timeoutMs: config.SHUTDOWN_TIMEOUT_MS }, 'shutdown timed out; forcing exit');
        void releaseResources().finally(() => process.exit(1));
      }, config.SHUTDOWN_TIMEOUT_MS);
      force.unref();
      // Then app.close(): stop accepting, finish in-flight requests, run module destroy hooks (schedulers,
      // workers hand their leases back, upstream agent, pool); then the sandbox and the embedded cluster stop.
      void delay(drainMs)
        .then(() => {
          logger.info('drain over: closing');
          return app.close();
        })
        .then(releaseResources)
        // Spans still in the batch exporter's buffer (a no-op when tracing is off), within what is left of
        // SHUTDOWN_TIMEOUT_MS: a collector out of reach loses them instead of forcing exit 1.
        .then(() =>
          flushTracingWithin(
            config.SHUTDOWN_TIMEOUT_MS - (performance.now() - startedAt),
            (fields, message) => logger.warn(fields, message),
          ),
        )
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
    // on, not once: a terminal's Ctrl-C reaches node twice (directly and forwarded by npm); the second
    // must not fall through to the default handler and kill the drain half-way.
    process.on('SIGTERM', shutdown);
    process.on('SIGINT', shutdown);
  } catch (error) {
    process.stderr.write(`startup failed: ${error instanceof Error ? error.message : String(error)}\n`);
    await releaseResources();
    process.exit(1);
  }
}

void main();
