import { loadAppConfig, type AppConfig } from './app.config';
import { loadAuthConfig, type AuthConfig } from './auth.config';
import { loadCheckoutConfig, type CheckoutConfig } from './checkout.config';
import { loadListingsConfig, type ListingsConfig } from './listings.config';
import { loadSandboxEnv, type SandboxEnv } from './sandbox.config';
import { loadSyncConfig, type SyncConfig } from './sync.config';
import { loadTransactionsConfig, type TransactionsConfig } from './transactions.config';
import { loadUpstreamConfig, type UpstreamConfig } from './upstream.config';
import { collectProblems, ConfigValidationError } from './validate-env';
import { loadWebhooksConfig, type WebhooksConfig } from './webhooks.config';

/** Everything the service process reads from its environment, validated together. */
export interface ServiceConfig {
  app: AppConfig;
  auth: AuthConfig;
  upstream: UpstreamConfig;
  transactions: TransactionsConfig;
  sync: SyncConfig;
  checkout: CheckoutConfig;
  listings: ListingsConfig;
  webhooks: WebhooksConfig;
  /**
   * SANDBOX_* variables of the in-process sandbox (the sandbox turns them into its options); empty when
   * UPSTREAM_BASE_URL points elsewhere.
   */
  sandbox: SandboxEnv | Record<string, never>;
}

/**
 * Validates every configuration class plus the rules that span classes, and throws one
 * ConfigValidationError listing every problem (names only), so one start shows them all.
 */
export function loadServiceConfig(env: NodeJS.ProcessEnv): ServiceConfig {
  const problems: string[] = [];
  const load = <T>(fn: () => T): T | undefined => collectProblems(fn, problems);
  const app = load(() => loadAppConfig(env));
  const auth = load(() => loadAuthConfig(env));
  const upstream = load(() => loadUpstreamConfig(env));
  const transactions = load(() => loadTransactionsConfig(env));
  const sync = load(() => loadSyncConfig(env));
  const checkout = load(() => loadCheckoutConfig(env));
  const listings = load(() => loadListingsConfig(env));
  const webhooks = load(() => loadWebhooksConfig(env));
  // SANDBOX_* matter only when the sandbox is the upstream.
  const sandbox = upstream?.usesInProcessSandbox === false ? {} : load(() => loadSandboxEnv(env));
  if (app?.NODE_ENV === 'production' && upstream?.usesInProcessSandbox) {
    problems.push(
      'UPSTREAM_BASE_URL: must be set when NODE_ENV=production (the in-process sandbox is test money)',
    );
    if (upstream.UPSTREAM_API_KEY === undefined) {
      problems.push('UPSTREAM_API_KEY: must be set when NODE_ENV=production');
    }
  }
  if (
    !app ||
    !auth ||
    !upstream ||
    !sync ||
    !transactions ||
    !checkout ||
    !listings ||
    !webhooks ||
    !sandbox ||
    problems.length > 0
  )
    throw new ConfigValidationError(problems);
  return { app, auth, upstream, sync, transactions, checkout, listings, webhooks, sandbox };
}
