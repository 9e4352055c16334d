import { IsOptional, MaxLength, MinLength } from 'class-validator';
import { isLocalDemo } from './deployment';
import { ConfigValidationError, EnvBool, EnvInt, validateEnvClass } from './validate-env';
import { Retried } from './retry-description';

/**
 * Environment variables of the `webhooks/` module (outbox, endpoints, Standard Webhooks delivery, the catch-up
 * feed; docs/webhooks.md). Documented in `.env.example`; a unit test keeps both in step. The retry schedule
 * itself is fixed (src/webhooks/delivery.schedule.ts, docs/RETRIES.md).
 */
export class WebhooksConfig {
  /** Run the delivery worker on this replica (every replica normally runs it). */
  @EnvBool()
  WEBHOOKS_WORKER_ENABLED = true;

  /** How often the worker looks for due deliveries (ms). */
  @EnvInt(10, 60_000)
  @Retried({
    unit: 'ms',
    bounds: 'pause between delivery-worker passes: the latency of every first send and retry',
    where: 'webhooks/delivery.worker.ts',
  })
  WEBHOOKS_WORKER_INTERVAL_MS = 500;

  /** Deliveries one replica sends at once. */
  @EnvInt(1, 256)
  @Retried({
    unit: 'count',
    bounds: 'deliveries one replica sends at once',
    where: 'webhooks/delivery.worker.ts',
  })
  WEBHOOKS_WORKER_CONCURRENCY = 32;

  /**
   * Deliveries one endpoint has in flight at once, across replicas (a hanging receiver holds at most this many
   * sends; pings and manual retries included).
   */
  @EnvInt(1, 256)
  WEBHOOKS_ENDPOINT_MAX_IN_FLIGHT = 4;

  /** Deliveries one client's endpoints have in flight at once, across replicas (its share of the workers). */
  @EnvInt(1, 1024)
  WEBHOOKS_CLIENT_MAX_IN_FLIGHT = 8;

  /** Pings and manual retries one endpoint accepts per minute; one more → 429 RATE_LIMITED with Retry-After. */
  @EnvInt(1, 10_000)
  WEBHOOKS_MANUAL_SENDS_PER_MINUTE = 10;

  /** One send: connect, request and the response's status line within this (ms); else a failed try. */
  @EnvInt(100, 60_000)
  @Retried({
    unit: 'ms',
    bounds: 'one send: resolution, connection, request and the response status; else a failed try',
    where: 'webhooks/webhook.sender.ts',
  })
  WEBHOOKS_DELIVERY_TIMEOUT_MS = 10_000;

  /** How long a sender holds a claimed delivery (ms; above the timeout). A crashed sender's delivery is re-sent after it. */
  @EnvInt(200, 600_000)
  @Retried({
    unit: 'ms',
    bounds: "a sender's hold on a delivery; a sender killed mid-send is re-sent (same webhook-id) after it",
    where: 'webhooks/delivery.worker.ts',
  })
  WEBHOOKS_LEASE_MS = 30_000;

  /** An endpoint whose every try failed for this long (hours) is disabled, with the reason in its GET. */
  @EnvInt(1, 8_760)
  @Retried({
    unit: 'count',
    bounds: 'hours of only failed tries after which an endpoint is disabled (with the reason)',
    where: 'webhooks/webhook-delivery.repository.ts',
  })
  WEBHOOKS_DISABLE_AFTER_HOURS = 120;

  /** After a rotation the previous secret keeps signing (a second `v1,` signature) this long (ms). */
  @EnvInt(0, 604_800_000)
  @Retried({
    unit: 'ms',
    bounds: 'after a rotation, the old secret signs alongside the new one (not a retry)',
    where: 'webhooks/webhook-endpoint.repository.ts',
  })
  WEBHOOKS_SECRET_GRACE_MS = 86_400_000;

  /** Endpoints one client may register. */
  @EnvInt(1, 100)
  WEBHOOKS_MAX_ENDPOINTS_PER_CLIENT = 10;

  /** Unexpired price watches one client may hold (src/watches/, docs/watches.md); one more is 409 CONFLICT. */
  @EnvInt(1, 1_000_000)
  WATCHES_MAX_PER_CLIENT = 1_000;

  /**
   * Events (and their delivery log) are kept this many days; the feed answers 410 for older cursors. At least 2:
   * longer than a delivery's whole retry schedule (about 28 h), so pruning never cuts one short.
   */
  @EnvInt(2, 3_650)
  @Retried({
    unit: 'count',
    bounds: 'days events and their delivery log are kept; an older feed cursor is 410',
    where: 'webhooks/outbox.pruner.ts',
  })
  WEBHOOKS_RETENTION_DAYS = 30;

  /** How often a replica prunes events older than the retention (ms). */
  @EnvInt(1_000, 86_400_000)
  @Retried({
    unit: 'ms',
    bounds: 'pause between retention passes',
    where: 'webhooks/outbox.pruner.ts',
  })
  WEBHOOKS_PRUNE_INTERVAL_MS = 3_600_000;

  /**
   * Key (>= 32 characters) that endpoint secrets are encrypted with at rest (AES-256-GCM over its SHA-256).
   * Unset: derived from the effective API_KEY_PEPPER. Changing it (or the pepper it derives from) makes stored
   * endpoint secrets unreadable: rotate every endpoint's secret afterwards.
   */
  @IsOptional()
  @MinLength(32, { message: 'WEBHOOKS_SECRET_KEY must be at least 32 characters' })
  @MaxLength(512, { message: 'WEBHOOKS_SECRET_KEY must be at most 512 characters' })
  WEBHOOKS_SECRET_KEY?: string;

  /**
   * Endpoint URLs may be http to a loopback host and deliveries may reach loopback and private addresses (local
   * receivers: tests, the chaos run). Unset: only in the local demo (config/deployment.ts). Refused with
   * NODE_ENV=production.
   */
  @EnvBool()
  @IsOptional()
  WEBHOOKS_ALLOW_PRIVATE_TARGETS?: boolean;

  /**
   * Filled in by loadWebhooksConfig: not the local demo and no WEBHOOKS_ALLOW_PRIVATE_TARGETS=true. Then endpoint
   * URLs must be https and deliveries never reach loopback or private addresses.
   */
  production = true;
}

/** Reads and validates the webhooks variables (throws ConfigValidationError naming every bad one). */
export function loadWebhooksConfig(env: NodeJS.ProcessEnv = process.env): WebhooksConfig {
  const config = validateEnvClass(WebhooksConfig, env);
  if (config.WEBHOOKS_LEASE_MS <= config.WEBHOOKS_DELIVERY_TIMEOUT_MS)
    throw new ConfigValidationError([
      'WEBHOOKS_LEASE_MS: must be greater than WEBHOOKS_DELIVERY_TIMEOUT_MS (a send must end within its lease)',
    ]);
  if (env.NODE_ENV === 'production' && config.WEBHOOKS_ALLOW_PRIVATE_TARGETS === true)
    throw new ConfigValidationError([
      'WEBHOOKS_ALLOW_PRIVATE_TARGETS: refused when NODE_ENV=production (deliveries must not reach private networks)',
    ]);
  config.production = !(config.WEBHOOKS_ALLOW_PRIVATE_TARGETS ?? isLocalDemo(env));
  return config;
}
