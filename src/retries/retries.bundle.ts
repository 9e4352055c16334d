import { authRetries } from '../auth/auth.retries';
import {
  catalogSyncRetries,
  syncPassWorstCase,
  type SyncPassResource,
} from '../catalog-sync/catalog-sync.retries';
import { checkoutRetries, orderWorstCase } from '../checkout/checkout.retries';
import type { Bound } from '../common/worst-case';
import { AppConfig } from '../config/app.config';
import { AuthConfig } from '../config/auth.config';
import { CheckoutConfig } from '../config/checkout.config';
import { ListingsConfig } from '../config/listings.config';
import { describedSettings, type RetryDescription, type RetryModule } from '../config/retry-description';
import { SandboxEnv } from '../config/sandbox.config';
import { SyncConfig } from '../config/sync.config';
import { TransactionsConfig } from '../config/transactions.config';
import { UpstreamConfig } from '../config/upstream.config';
import { WebhooksConfig } from '../config/webhooks.config';
import { listingsRetries, mirrorRefreshWorstCase } from '../listings/listings.retries';
import { ledgerWorstCase, transactionsRetries } from '../transactions/transactions.retries';
import { upstreamCallWorstCase, upstreamRetries } from '../upstream/upstream.retries';
import { webhookDeliveryWorstCase, webhooksRetries } from '../webhooks/webhooks.retries';

/**
 * Collects the modules' retry descriptions (each `src/<feature>/<feature>.retries.ts`) for docs/RETRIES.md. Only
 * gathers: every setting is described where it is declared, every worst case computed by its own module.
 */

/** Every configuration class the service validates, as one bundle (defaults: `defaultRetriesConfig()`). */
export interface RetriesConfig {
  app: AppConfig;
  auth: AuthConfig;
  upstream: UpstreamConfig;
  checkout: CheckoutConfig;
  transactions: TransactionsConfig;
  sync: SyncConfig;
  listings: ListingsConfig;
  webhooks: WebhooksConfig;
  sandbox: SandboxEnv;
}

/** The defaults: what the service runs with when no variable is set. */
export function defaultRetriesConfig(): RetriesConfig {
  return {
    app: new AppConfig(),
    auth: new AuthConfig(),
    upstream: new UpstreamConfig(),
    checkout: new CheckoutConfig(),
    transactions: new TransactionsConfig(),
    sync: new SyncConfig(),
    listings: new ListingsConfig(),
    webhooks: new WebhooksConfig(),
    sandbox: new SandboxEnv(),
  };
}

/** The sections of docs/RETRIES.md, in order. */
export const MODULE_TITLES: Record<RetryModule, string> = {
  upstream: 'Upstream client (every upstream call)',
  checkout: 'Checkout (orders)',
  transactions: 'Transactions (ledger)',
  'catalog-sync': 'Catalog sync (mirror passes)',
  webhooks: 'Webhooks (deliveries to marketplace receivers, outbox retention)',
  service: 'Service (HTTP, health, database, auth, read API)',
  sandbox: 'Sandbox (the test upstream only)',
};

/** Every retry / lease / poll / interval / timeout / give-up setting, with its value in `config`. */
export function retryDescriptions(config: RetriesConfig = defaultRetriesConfig()): RetryDescription[] {
  return [
    ...upstreamRetries(config.upstream),
    ...checkoutRetries(config.checkout),
    ...transactionsRetries(config.transactions),
    ...catalogSyncRetries(config.sync),
    ...webhooksRetries(config.webhooks),
    // The service-wide variables (HTTP server, health, shutdown, status page) are read by main.ts and
    // app.factory.ts, which own no feature folder; the sandbox's only by the startup wiring.
    ...describedSettings(config.app, 'service', 'app.config.ts'),
    ...authRetries(config.auth),
    ...listingsRetries(config.listings),
    ...describedSettings(config.sandbox, 'sandbox', 'sandbox.config.ts'),
  ];
}

/** The sandbox's default catalog size: the worked example of the sync figures. */
export function sandboxItems(config: RetriesConfig, resource: SyncPassResource): number {
  return resource === 'events' ? config.sandbox.SANDBOX_EVENTS : config.sandbox.SANDBOX_LISTINGS;
}

/** Every finite worst-case time, by name (ms): what a delay, timeout, lease or interval setting can only raise. */
export function finiteWorstCaseTimes(config: RetriesConfig): Record<string, number> {
  const times: Record<string, number> = {};
  const put = (name: string, bound: Bound) => {
    if (bound.value !== null) times[name] = bound.value;
  };
  for (const kind of ['read', 'sign', 'submit'] as const)
    put(`upstream ${kind} call`, upstreamCallWorstCase(config.upstream, kind).time);
  const order = orderWorstCase(config);
  put('order revalidation per attempt', order.revalidationTimePerAttempt);
  put('order retry delay', { value: order.worstRetryDelayMs, arithmetic: '' });
  const ledger = ledgerWorstCase(config);
  put('ledger unknown signing', ledger.signing.time);
  put('ledger until give-up', ledger.submissions.time);
  put('ledger mirror refresh waits', mirrorRefreshWorstCase(config).waits);
  for (const resource of ['events', 'listings'] as const) {
    const pass = syncPassWorstCase(config, resource, sandboxItems(config, resource));
    put(`sync ${resource} pass`, pass.time);
    put(`sync ${resource} cap`, pass.capTime);
    put(`sync ${resource} gap`, pass.gapMs);
  }
  put('webhook delivery until failed', webhookDeliveryWorstCase(config).time);
  return times;
}
