import type { ListingsConfig } from '../config/listings.config';

/** What the read API needs of SyncConfig (its freshness threshold and intervals). */
export interface SyncTiming {
  SYNC_STALE_AFTER_MS: number;
  SYNC_EVENTS_INTERVAL_MS: number;
  SYNC_LISTINGS_INTERVAL_MS: number;
}

export const READ_API_SETTINGS = Symbol('READ_API_SETTINGS');

/** The read API's settings, resolved once from ListingsConfig and the sync timing. */
export interface ReadApiSettings {
  cacheMaxBytes: number;
  strict: boolean;
  stateRefreshMs: number;
  freshTimeoutMs: number;
  /** `stale: true` past this age of `data_as_of` (the same threshold readiness uses). */
  staleAfterMs: number;
  /** Cache-Control max-age of answers built from events / listings. */
  eventsMaxAgeSeconds: number;
  listingsMaxAgeSeconds: number;
}

/**
 * A client may reuse an answer for a quarter of the sync interval of the resource it is built from: the
 * mirror itself lags the upstream by up to one interval, so a private cache adds at most a quarter to
 * that, and revalidation (If-None-Match → 304) after it costs no body.
 */
export function maxAgeSeconds(intervalMs: number): number {
  return Math.max(1, Math.floor(intervalMs / 4000));
}

export function readApiSettings(config: ListingsConfig, sync: SyncTiming): ReadApiSettings {
  return {
    cacheMaxBytes: config.LISTINGS_CACHE_MAX_BYTES,
    strict: config.LISTINGS_CACHE_STRICT,
    stateRefreshMs: config.LISTINGS_STATE_REFRESH_MS,
    freshTimeoutMs: config.LISTINGS_FRESH_TIMEOUT_MS,
    staleAfterMs: sync.SYNC_STALE_AFTER_MS,
    eventsMaxAgeSeconds: maxAgeSeconds(sync.SYNC_EVENTS_INTERVAL_MS),
    listingsMaxAgeSeconds: maxAgeSeconds(
      Math.min(sync.SYNC_EVENTS_INTERVAL_MS, sync.SYNC_LISTINGS_INTERVAL_MS),
    ),
  };
}
