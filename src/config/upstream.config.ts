import { IsIn, IsString, Matches, registerDecorator, type ValidationArguments } from 'class-validator';
import { EnvBool, EnvInt, validateEnvClass } from './validate-env';
import { Retried } from './retry-description';

export const UPSTREAM_ENVIRONMENTS = ['sandbox', 'production'] as const;
export type UpstreamEnvironment = (typeof UPSTREAM_ENVIRONMENTS)[number];

const LOOPBACK_HOST = /^https?:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?(\/|$)/i;

const KEY_FORMAT = /^[\x21-\x7e]{1,512}$/;

/**
 * The key is required whenever a real upstream is addressed or money is real, and must be a plain header
 * token. One validator for both, so the message says which; it never includes the value.
 */
function ValidUpstreamApiKey(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'validUpstreamApiKey',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: (args: ValidationArguments) =>
          args.value === undefined
            ? 'UPSTREAM_API_KEY must be set when UPSTREAM_ENVIRONMENT=production or UPSTREAM_BASE_URL is set ' +
              '(the in-process sandbox is only used when both are unset)'
            : 'UPSTREAM_API_KEY must be 1 to 512 printable ASCII characters without spaces',
      },
      validator: {
        validate(value: unknown, args: ValidationArguments): boolean {
          const cfg = args.object as UpstreamConfig;
          if (value === undefined) {
            return cfg.UPSTREAM_ENVIRONMENT !== 'production' && cfg.UPSTREAM_BASE_URL === undefined;
          }
          return typeof value === 'string' && KEY_FORMAT.test(value);
        },
      },
    });
}

const URL_FORMAT = /^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/;

/** Optional in sandbox (unset = in-process sandbox); required and https (or loopback) in production. */
function ValidUpstreamBaseUrl(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'validUpstreamBaseUrl',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: (args: ValidationArguments) =>
          args.value === undefined
            ? 'UPSTREAM_BASE_URL must be set when UPSTREAM_ENVIRONMENT=production (no in-process sandbox for real money)'
            : 'UPSTREAM_BASE_URL must be an http(s) URL without query or fragment; https:// in production ' +
              '(plain http only for a loopback host)',
      },
      validator: {
        validate(value: unknown, args: ValidationArguments): boolean {
          const production = (args.object as UpstreamConfig).UPSTREAM_ENVIRONMENT === 'production';
          if (value === undefined) return !production;
          if (typeof value !== 'string' || !URL_FORMAT.test(value)) return false;
          return !production || value.startsWith('https://') || LOOPBACK_HOST.test(value);
        },
      },
    });
}

/** An absolute URL path (the paths the contract does not show). */
function Path(): PropertyDecorator {
  return (target, key) => {
    IsString()(target, key);
    Matches(/^\/[A-Za-z0-9._~\-/]*$/, { message: `${String(key)} must be an absolute path like /a/b` })(
      target,
      key,
    );
  };
}

/**
 * Upstream API configuration (docs/upstream-client.md). Separate from AppConfig because the in-process
 * sandbox decision happens before the module graph exists; main.ts resolves base URL and key from it.
 */
export class UpstreamConfig {
  /** Unset: main.ts starts the in-process sandbox and passes its URL and documented sandbox key. */
  @ValidUpstreamBaseUrl()
  UPSTREAM_BASE_URL?: string;

  @ValidUpstreamApiKey()
  UPSTREAM_API_KEY?: string;

  @IsIn(UPSTREAM_ENVIRONMENTS, { message: 'UPSTREAM_ENVIRONMENT must be sandbox or production' })
  UPSTREAM_ENVIRONMENT: UpstreamEnvironment = 'sandbox';

  @EnvInt(50, 120_000)
  @Retried({
    unit: 'ms',
    bounds: 'one attempt of a read (events, listings, protocol config, purchase status, key check)',
    where: 'upstream/upstream.options.ts, http/attempt.ts',
  })
  UPSTREAM_READ_TIMEOUT_MS = 5_000;

  @EnvInt(50, 120_000)
  @Retried({
    unit: 'ms',
    bounds: 'one attempt of a signing call',
    where: 'upstream/upstream.options.ts, http/attempt.ts',
  })
  UPSTREAM_SIGN_TIMEOUT_MS = 10_000;

  @EnvInt(50, 120_000)
  @Retried({
    unit: 'ms',
    bounds: 'one attempt of a submission',
    where: 'upstream/upstream.options.ts, http/attempt.ts',
  })
  UPSTREAM_SUBMIT_TIMEOUT_MS = 15_000;

  @EnvInt(100, 600_000)
  @Retried({
    unit: 'ms',
    bounds: 'one whole call: every attempt, backoff sleep, Retry-After wait and rate-limiter wait',
    where: 'upstream/upstream.options.ts, http/retry-loop.ts',
  })
  UPSTREAM_DEADLINE_MS = 30_000;

  @EnvInt(1, 10)
  @Retried({
    unit: 'count',
    bounds:
      'HTTP attempts per upstream call, the first included (retried: 500/502/503/504, network, timeout, 429)',
    where: 'upstream/upstream.options.ts, http/retry-loop.ts',
  })
  UPSTREAM_MAX_ATTEMPTS = 4;

  @EnvInt(1, 60_000)
  @Retried({
    unit: 'ms',
    bounds: 'in-call backoff ceiling after the first failed attempt (full jitter, doubles per attempt)',
    where: 'upstream/upstream.options.ts, http/backoff.ts',
  })
  UPSTREAM_BACKOFF_BASE_MS = 200;

  @EnvInt(1, 300_000)
  @Retried({
    unit: 'ms',
    bounds: 'largest in-call backoff ceiling (raised to the base when lower)',
    where: 'upstream/upstream.options.ts, http/backoff.ts',
  })
  UPSTREAM_BACKOFF_MAX_MS = 5_000;

  @EnvInt(0, 600_000)
  @Retried({
    unit: 'ms',
    bounds: 'longest 429 Retry-After waited inside a call; longer ends the call RATE_LIMITED with the wait',
    where: 'upstream/upstream.options.ts, http/retry-loop.ts',
  })
  UPSTREAM_RETRY_AFTER_CAP_MS = 30_000;

  @EnvInt(1, 1_000)
  @Retried({
    unit: 'count',
    bounds: 'consecutive failed attempts that open the circuit (then calls fail fast, not retried)',
    where: 'upstream/upstream.options.ts, http/attempt.ts',
  })
  UPSTREAM_BREAKER_THRESHOLD = 10;

  @EnvInt(100, 600_000)
  @Retried({
    unit: 'ms',
    bounds: 'open circuit → one trial call after this long',
    where: 'upstream/upstream.options.ts, http/attempt.ts',
  })
  UPSTREAM_BREAKER_HALF_OPEN_MS = 10_000;

  @EnvInt(1, 1_024)
  @Retried({
    unit: 'count',
    bounds: 'requests in flight (bulkhead)',
    where: 'upstream/upstream.options.ts, http/attempt.ts',
  })
  UPSTREAM_MAX_CONCURRENCY = 16;

  @EnvInt(0, 100_000)
  @Retried({
    unit: 'count',
    bounds: 'calls waiting for a slot; beyond it UNAVAILABLE at once (not retried)',
    where: 'upstream/upstream.options.ts, http/attempt.ts',
  })
  UPSTREAM_MAX_QUEUE = 1_000;

  @EnvInt(1, 10_000)
  @Retried({
    unit: 'rps',
    bounds:
      'request rate of the whole service, a share per live replica (halved by every 429 of any replica)',
    where: 'upstream/upstream.options.ts, http/rate-limiter.ts',
  })
  UPSTREAM_RATE_LIMIT_RPS = 50;

  @EnvInt(1, 10_000)
  @Retried({
    unit: 'rps',
    bounds: 'floor of the lowered rate',
    where: 'upstream/upstream.options.ts, http/rate-limiter.ts',
  })
  UPSTREAM_RATE_LIMIT_MIN_RPS = 1;

  @EnvInt(0, 3_600_000)
  @Retried({
    unit: 'ms',
    bounds: 'reuse of a key-check verdict by readiness (a 401 anywhere invalidates it)',
    where: 'upstream/upstream.options.ts, upstream.key-check.ts',
  })
  UPSTREAM_KEY_CHECK_TTL_MS = 30_000;

  /** Readiness fails on key problems (401/403) always; on an unreachable upstream only when true. */
  @EnvBool()
  UPSTREAM_READY_REQUIRES_REACHABLE = false;

  @EnvInt(1, 10_000)
  UPSTREAM_PAGE_LIMIT = 100;

  @Path()
  UPSTREAM_ACTIVE_LISTINGS_PATH = '/indexer/listings/active';

  @Path()
  UPSTREAM_PROTOCOL_CONFIG_PATH = '/indexer/protocol-config';

  @Path()
  UPSTREAM_PURCHASE_STATUS_PATH = '/claim_wallets/purchase-status';

  @IsString()
  @Matches(/^[A-Za-z0-9._~-]{1,64}$/, {
    message: 'UPSTREAM_PURCHASE_STATUS_KEY_PARAM must be a query parameter name',
  })
  UPSTREAM_PURCHASE_STATUS_KEY_PARAM = 'idempotency-key';

  /** True when main.ts must start the in-process sandbox (no upstream address configured). */
  get usesInProcessSandbox(): boolean {
    return this.UPSTREAM_BASE_URL === undefined;
  }
}

/**
 * Reads and validates the upstream variables once. Throws ConfigValidationError naming every bad variable
 * (never echoing a value: UPSTREAM_API_KEY may be the bad one).
 */
export function loadUpstreamConfig(env: NodeJS.ProcessEnv = process.env): UpstreamConfig {
  return validateEnvClass(UpstreamConfig, env);
}
