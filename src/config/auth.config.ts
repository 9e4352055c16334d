import { createHmac } from 'node:crypto';
import { IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { ConfigValidationError, EnvBool, EnvInt, validateEnvClass } from './validate-env';

/**
 * Used outside production when API_KEY_PEPPER is unset, so a fresh checkout (service and `npm run
 * keys`) agree without configuration. Production refuses to start without a real pepper.
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
  /** HMAC key for stored key hashes. Secret; required in production (>= 32 characters). */
  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'API_KEY_PEPPER must be at least 32 characters' })
  @MaxLength(512, { message: 'API_KEY_PEPPER must be at most 512 characters' })
  API_KEY_PEPPER?: string;

  /**
   * HMAC key of the keyset cursors (`common/keyset-cursor.ts`). Secret; required in production
   * (>= 32 characters). Outside production it is derived from the effective pepper, so replicas
   * that share API_KEY_PEPPER accept each other's cursors without another variable.
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
  API_KEY_CACHE_TTL_MS = 2000;

  /** `GET /metrics` without a key (true) or with the `admin` scope only (false). */
  @EnvBool()
  METRICS_PUBLIC = true;

  @EnvInt(1, 3_600_000)
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

  /** Filled in by loadAuthConfig: API_KEY_PEPPER, or the development pepper outside production. */
  pepper = '';

  /** Filled in by loadAuthConfig: CURSOR_SECRET, or (outside production) one derived from the pepper. */
  cursorSecret = '';
}

/** Outside production: a cursor secret every replica with the same pepper derives identically. */
export function derivedCursorSecret(pepper: string): string {
  return createHmac('sha256', pepper).update('keyset-cursor-secret-v1').digest('hex');
}

/**
 * Reads and validates the auth variables once (throws ConfigValidationError naming every bad one).
 * `NODE_ENV` is read from the same environment: production requires API_KEY_PEPPER and CURSOR_SECRET.
 */
export function loadAuthConfig(env: NodeJS.ProcessEnv = process.env): AuthConfig {
  const config = validateEnvClass(AuthConfig, env);
  const production = env.NODE_ENV === 'production';
  const missing: string[] = [];
  if (production && !config.API_KEY_PEPPER)
    missing.push(
      'API_KEY_PEPPER: required when NODE_ENV=production (a random secret of at least 32 characters)',
    );
  if (production && !config.CURSOR_SECRET)
    missing.push(
      'CURSOR_SECRET: required when NODE_ENV=production (a random secret of at least 32 characters)',
    );
  if (missing.length > 0) throw new ConfigValidationError(missing);
  config.pepper = config.API_KEY_PEPPER ?? DEVELOPMENT_API_KEY_PEPPER;
  config.cursorSecret = config.CURSOR_SECRET ?? derivedCursorSecret(config.pepper);
  return config;
}
