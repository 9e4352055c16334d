import { createHmac } from 'node:crypto';
import { IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { isLocalDemo, missingSecret } from './deployment';
import { ConfigValidationError, EnvBool, EnvInt, validateEnvClass } from './validate-env';
import { Retried } from './retry-description';

/**
 * Used only in the local demo (config/deployment.ts) when API_KEY_PEPPER is unset, so a fresh checkout (service
 * and `npm run keys`) agree without configuration. Anywhere else the start is refused without a real pepper:
 * this value is public, and key hashes, cursor MACs, webhook-secret encryption and status sessions derive from it.
 */
export const DEVELOPMENT_API_KEY_PEPPER = 'ticket-resale-bff-development-pepper-not-for-production';

/** Same shape as API_KEY_PATTERN in src/auth/api-key.ts (config must not import feature modules). */
const API_KEY_SHAPE = /^trb_live_[0-9A-Za-z]{43}_[0-9A-Za-z]{6}$/;

/**
 * Largest accepted per-window request budget. The in-memory sliding-window store (auth/
 * sliding-window.storage.ts) keeps one 8-byte expiry per counted hit per client, so this bounds it at
 * 800 KB per client; larger rates need a shorter RATE_LIMIT_WINDOW_MS. (The stock store it replaced threw
 * a RangeError past about 120,000 hits in one window.)
 */
const MAX_RATE_LIMIT = 100_000;

/**
 * Environment variables of the `auth/` module (API keys, scopes, rate limits). Documented in
 * `.env.example` next to the service's other variables; a unit test keeps the two in step.
 */
export class AuthConfig {
  /** HMAC key for stored key hashes. Secret; required outside the local demo (>= 32 characters). */
  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'API_KEY_PEPPER must be at least 32 characters' })
  @MaxLength(512, { message: 'API_KEY_PEPPER must be at most 512 characters' })
  API_KEY_PEPPER?: string;

  /**
   * HMAC key of the keyset cursors (`common/keyset-cursor.ts`). Secret; required outside the local demo
   * (>= 32 characters). In the local demo it is derived from the development pepper.
   */
  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'CURSOR_SECRET must be at least 32 characters' })
  @MaxLength(512, { message: 'CURSOR_SECRET must be at most 512 characters' })
  CURSOR_SECRET?: string;

  /** Registered as an admin client at startup when no client has it yet. Must be a well-formed key. */
  @IsOptional()
  @Matches(API_KEY_SHAPE, {
    message: 'BFF_BOOTSTRAP_API_KEY must be a key in the trb_live_<43 base62>_<6 base62> format',
  })
  BFF_BOOTSTRAP_API_KEY?: string;

  /** How long a verified key is trusted without re-reading its row (revocation delay), 0..5000 ms. */
  @EnvInt(0, 5000)
  @Retried({
    unit: 'ms',
    bounds: 'reuse of a verified API key (revocation delay)',
    where: 'auth/api-key.authenticator.ts',
  })
  API_KEY_CACHE_TTL_MS = 2000;

  /**
   * `GET /metrics` without a key (true) or with the `admin` scope only (false). Unset: public in the local demo,
   * admin-only anywhere else (filled in by loadAuthConfig).
   */
  @EnvBool()
  @IsOptional()
  METRICS_PUBLIC?: boolean;

  @EnvInt(1, 3_600_000)
  @Retried({
    unit: 'ms',
    bounds: "window of our clients' rate limits (429 with Retry-After)",
    where: 'auth/',
  })
  RATE_LIMIT_WINDOW_MS = 60_000;

  /** Per client and window, routes that need only a valid key (`GET /v1/me`). */
  @EnvInt(1, MAX_RATE_LIMIT)
  RATE_LIMIT_DEFAULT = 600;

  @EnvInt(1, MAX_RATE_LIMIT)
  RATE_LIMIT_CATALOG_READ = 1200;

  @EnvInt(1, MAX_RATE_LIMIT)
  RATE_LIMIT_LISTINGS_WRITE = 120;

  @EnvInt(1, MAX_RATE_LIMIT)
  RATE_LIMIT_ORDERS_WRITE = 60;

  @EnvInt(1, MAX_RATE_LIMIT)
  RATE_LIMIT_TRANSACTIONS_WRITE = 120;

  @EnvInt(1, MAX_RATE_LIMIT)
  RATE_LIMIT_ADMIN = 120;

  /**
   * Failed authentications (a wrong, unknown, revoked or malformed key, the status page's included) one source
   * address may make per RATE_LIMIT_WINDOW_MS, on every route and `POST /status/login`; past it every request of
   * that address that needs a credential is 429 with Retry-After until the window frees. The whole service's
   * budget, like the others (each replica counts budget / live replicas).
   */
  @EnvInt(1, MAX_RATE_LIMIT)
  RATE_LIMIT_AUTH_FAILURES = 60;

  /** Filled in by loadAuthConfig: API_KEY_PEPPER, or the development pepper in the local demo. */
  pepper = '';

  /** Filled in by loadAuthConfig: CURSOR_SECRET, or (local demo) one derived from the development pepper. */
  cursorSecret = '';
}

/** Local demo: a cursor secret every process with the same pepper derives identically. */
export function derivedCursorSecret(pepper: string): string {
  return createHmac('sha256', pepper).update('keyset-cursor-secret-v1').digest('hex');
}

/**
 * Reads and validates the auth variables once (throws ConfigValidationError naming every bad one). Outside the
 * local demo (config/deployment.ts, read from the same environment) API_KEY_PEPPER and CURSOR_SECRET are
 * required and /metrics is admin-only unless METRICS_PUBLIC=true.
 */
export function loadAuthConfig(env: NodeJS.ProcessEnv = process.env): AuthConfig {
  const config = validateEnvClass(AuthConfig, env);
  const localDemo = isLocalDemo(env);
  const missing: string[] = [];
  const secret = 'a random secret of at least 32 characters';
  if (!localDemo && !config.API_KEY_PEPPER) missing.push(missingSecret('API_KEY_PEPPER', secret));
  if (!localDemo && !config.CURSOR_SECRET) missing.push(missingSecret('CURSOR_SECRET', secret));
  if (missing.length > 0) throw new ConfigValidationError(missing);
  config.pepper = config.API_KEY_PEPPER ?? DEVELOPMENT_API_KEY_PEPPER;
  config.cursorSecret = config.CURSOR_SECRET ?? derivedCursorSecret(config.pepper);
  config.METRICS_PUBLIC ??= localDemo;
  return config;
}
