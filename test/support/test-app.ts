import { Writable } from 'node:stream';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { inject } from 'vitest';
import { createApp, type CreateAppOptions } from '../../src/app.factory';
import { loadAuthConfig } from '../../src/config/auth.config';
import { loadCheckoutConfig } from '../../src/config/checkout.config';
import { loadTransactionsConfig } from '../../src/config/transactions.config';
import { loadSyncConfig } from '../../src/config/sync.config';
import { loadListingsConfig } from '../../src/config/listings.config';
import { loadWebhooksConfig } from '../../src/config/webhooks.config';
import { loadUpstreamConfig } from '../../src/config/upstream.config';
import type { SandboxOptions } from '../../src/sandbox/sandbox.options';
import type { SandboxHandle } from '../../src/sandbox/sandbox.server';
import { upstreamOptionsFromConfig } from '../../src/upstream/upstream.options';
import { resolveUpstreamTarget } from '../../src/upstream-target';
import { loadAppConfig } from '../../src/config/app.config';
import { createDatabaseFromTemplate, dropDatabase } from './test-database';

/** Collects every JSON log line the app writes, for assertions (e.g. no secret ever logged). */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  }
  get text(): string {
    return this.lines.join('\n');
  }
  records(): Record<string, unknown>[] {
    return this.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  }
}

export interface TestApp {
  app: NestFastifyApplication;
  logs: LogCapture;
  databaseUrl: string;
  /** The in-process sandbox serving as this app's upstream (small seeded dataset). */
  sandbox: SandboxHandle;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Test-only modules mounted next to the real ones (e.g. an owned-resource fixture). */
  extraModules?: CreateAppOptions['extraModules'];
  /** Sandbox knobs (dataset size, landing delay, clock…); defaults to a small dataset. */
  sandbox?: SandboxOptions;
  /** The key the app's upstream client sends, when it should differ from the sandbox's own key. */
  upstreamApiKey?: string;
  /** Start on an empty database (no migrations applied) instead of a copy of the migrated template. */
  emptyDatabase?: boolean;
  /**
   * Run on this database (e.g. on a cluster the test file started and restarts itself) instead of a copy of
   * the shared template; close() leaves it to its owner.
   */
  databaseUrl?: string;
  /**
   * Where the app reaches its sandbox: given the sandbox's URL, the URL to use instead (e.g. a CountingProxy in
   * front of it, so a test sees when each request arrived upstream).
   */
  upstreamVia?: (sandboxUrl: string) => Promise<string>;
}

/**
 * The whole service on its own copy of the migrated template database, with its own in-process sandbox
 * upstream and logs captured in memory. `env` configures the app, auth and upstream config classes.
 */
export async function startTestApp(
  env: Record<string, string> = {},
  options: TestAppOptions = {},
): Promise<TestApp> {
  const adminUrl = inject('databaseAdminUrl');
  const databaseUrl =
    options.databaseUrl ??
    (await createDatabaseFromTemplate(adminUrl, options.emptyDatabase ? 'template0' : undefined));
  const fullEnv = { NODE_ENV: 'test', LOG_LEVEL: 'info', ...env, DATABASE_URL: databaseUrl };
  const config = loadAppConfig(fullEnv);
  const upstreamConfig = loadUpstreamConfig({ ...fullEnv, UPSTREAM_BASE_URL: '' });
  const target = await resolveUpstreamTarget(upstreamConfig, {
    seed: 'test',
    events: 5,
    listings: 60,
    ...options.sandbox,
  });
  const sandbox = target.sandbox as SandboxHandle;
  const logs = new LogCapture();
  try {
    const { app } = await createApp({
      config,
      authConfig: loadAuthConfig(fullEnv),
      transactionsConfig: loadTransactionsConfig(fullEnv),
      // Scheduled sync passes and the served-accuracy sampler only in tests that ask for them: a test that seeds
      // the mirror straight into the tables has rows the sandbox never had, which a live re-read would remove.
      syncConfig: loadSyncConfig({
        SYNC_ENABLED: 'false',
        MIRROR_ACCURACY_SAMPLE_INTERVAL_MS: '0',
        ...fullEnv,
      }),
      checkoutConfig: loadCheckoutConfig(fullEnv),
      listingsConfig: loadListingsConfig(fullEnv),
      webhooksConfig: loadWebhooksConfig(fullEnv),
      databaseUrl,
      logDestination: logs,
      extraModules: options.extraModules,
      upstream: upstreamOptionsFromConfig(upstreamConfig, {
        ...target,
        ...(options.upstreamVia && { baseUrl: await options.upstreamVia(target.baseUrl) }),
        apiKey: options.upstreamApiKey ?? target.apiKey,
      }),
    });
    await app.getHttpAdapter().getInstance().ready();
    return {
      app,
      logs,
      databaseUrl,
      sandbox,
      async close() {
        await app.close();
        await sandbox.close();
        if (!options.databaseUrl) await dropDatabase(adminUrl, databaseUrl);
      },
    };
  } catch (error) {
    await sandbox.close();
    throw error;
  }
}
