import { EnvBool, EnvInt, validateEnvClass } from './validate-env';
import { Retried } from './retry-description';

const GIB = 1024 * 1024 * 1024;

/**
 * Environment variables of the read API in `listings/` (docs/read-api.md). Documented in `.env.example`;
 * a unit test keeps the two in step. Freshness thresholds and Cache-Control come from SyncConfig.
 */
export class ListingsConfig {
  /**
   * Memory cap of the exact response cache (bytes of cached bodies and keys). 0 turns it off: every
   * request reads PostgreSQL.
   */
  @EnvInt(0, 4 * GIB)
  LISTINGS_CACHE_MAX_BYTES = 64 * 1024 * 1024;

  /**
   * true: every cached answer first reads the mirror generation from PostgreSQL (one tiny query), so no
   * replica serves an answer older than the last commit even for the moment before LISTEN/NOTIFY tells it.
   * false: the generation is learnt by LISTEN/NOTIFY (and re-read every LISTINGS_STATE_REFRESH_MS).
   */
  @EnvBool()
  LISTINGS_CACHE_STRICT = false;

  /**
   * How often the mirror state (generation, last completed passes, protocol config) is re-read besides
   * the notifications: bounds how late `data_as_of` follows a pass that completed without changing a row.
   */
  @EnvInt(100, 60_000)
  @Retried({
    unit: 'ms',
    bounds: 're-read of the mirror state; also the LISTEN reconnect delay',
    where: 'listings/mirror-state.tracker.ts',
  })
  LISTINGS_STATE_REFRESH_MS = 1000;

  /** Time budget of a `?fresh=true` live re-read (walk of one event's listings upstream). */
  @EnvInt(100, 60_000)
  @Retried({ unit: 'ms', bounds: 'a `?fresh=true` live re-read of one event', where: 'listings/' })
  LISTINGS_FRESH_TIMEOUT_MS = 5000;
}

/** Reads and validates the read API variables (throws ConfigValidationError naming every bad one). */
export function loadListingsConfig(env: NodeJS.ProcessEnv = process.env): ListingsConfig {
  return validateEnvClass(ListingsConfig, env);
}
