import { SANDBOX_API_KEY } from './sandbox-process';

/**
 * The secrets a service process needs outside the local demo (config/deployment.ts): every test, benchmark and
 * chaos replica addressing a sandbox *process* by UPSTREAM_BASE_URL is a deployment, not the demo. Test values,
 * public on purpose; loopback receivers are allowed explicitly (WEBHOOKS_ALLOW_PRIVATE_TARGETS).
 */
export const TEST_DEPLOYMENT_ENV: Readonly<Record<string, string>> = {
  API_KEY_PEPPER: 'test-deployment-pepper-0123456789abcdef',
  CURSOR_SECRET: 'test-deployment-cursor-secret-0123456789',
  WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
};

/**
 * Environment of a replica in the chaos run, the crash-point tests and the checkout benchmark: the standalone
 * sandbox as upstream, short leases and polls (a killed replica's orders are taken over within seconds), short
 * upstream timeouts (a `hang` fault costs seconds, not the 10-15 s defaults), short webhook polls and leases,
 * buyer limits and request rate limits raised out of the way (the load comes from one client), logs at warn,
 * no shutdown drain delay.
 */
export function replicaEnv(options: {
  databaseUrl: string;
  sandboxUrl: string;
  apiKey: string;
  extra?: Record<string, string>;
}): Record<string, string> {
  return {
    NODE_ENV: 'test',
    ...TEST_DEPLOYMENT_ENV,
    LOG_LEVEL: 'warn',
    DATABASE_URL: options.databaseUrl,
    MIGRATIONS_RUN: 'true',
    UPSTREAM_BASE_URL: options.sandboxUrl,
    UPSTREAM_API_KEY: SANDBOX_API_KEY,
    BFF_BOOTSTRAP_API_KEY: options.apiKey,
    UPSTREAM_READ_TIMEOUT_MS: '1500',
    UPSTREAM_SIGN_TIMEOUT_MS: '2000',
    UPSTREAM_SUBMIT_TIMEOUT_MS: '2000',
    UPSTREAM_DEADLINE_MS: '8000',
    UPSTREAM_BACKOFF_BASE_MS: '50',
    UPSTREAM_BACKOFF_MAX_MS: '1000',
    UPSTREAM_RETRY_AFTER_CAP_MS: '5000',
    UPSTREAM_MAX_CONCURRENCY: '64',
    UPSTREAM_RATE_LIMIT_RPS: '2000',
    UPSTREAM_RATE_LIMIT_MIN_RPS: '200',
    UPSTREAM_BREAKER_THRESHOLD: '1000',
    RATE_LIMIT_ORDERS_WRITE: '100000',
    RATE_LIMIT_DEFAULT: '100000',
    CHECKOUT_LEASE_MS: '3000',
    CHECKOUT_WORKER_INTERVAL_MS: '200',
    CHECKOUT_RETRY_BASE_DELAY_MS: '100',
    CHECKOUT_RETRY_MAX_DELAY_MS: '1000',
    CHECKOUT_TRACK_POLL_MS: '100',
    CHECKOUT_REVALIDATE_TIMEOUT_MS: '3000',
    CHECKOUT_MAX_OPEN_ORDERS_PER_BUYER: '10000',
    CHECKOUT_MAX_PURCHASES_PER_BUYER_PER_EVENT: '10000',
    TX_LEASE_MS: '3000',
    TX_TRACKER_INTERVAL_MS: '200',
    TX_RESUBMIT_BASE_DELAY_MS: '100',
    TX_RESUBMIT_MAX_DELAY_MS: '500',
    SYNC_JITTER_MS: '0',
    // Deliveries polled often, and a killed or frozen sender's delivery re-sent within seconds (the lease must
    // exceed the send timeout; the chaos receiver fails a try only within the lease of an event's writing).
    WEBHOOKS_WORKER_INTERVAL_MS: '200',
    WEBHOOKS_DELIVERY_TIMEOUT_MS: '3000',
    WEBHOOKS_LEASE_MS: '6000',
    // Stopped replicas close at once (no balancer to drain from); the rolling-restart test sets its own.
    SHUTDOWN_DRAIN_DELAY_MS: '0',
    ...options.extra,
  };
}
