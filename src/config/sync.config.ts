import { EnvBool, EnvInt, validateEnvClass } from './validate-env';
import { Retried } from './retry-description';

const DAY_MS = 86_400_000;

/**
 * Environment variables of `catalog-sync/` (docs/catalog-sync.md). Documented in `.env.example`; a unit
 * test keeps the two in step.
 */
export class SyncConfig {
  /** Scheduled passes (and the startup pass). false: only operator-triggered passes and event refreshes run. */
  @EnvBool()
  SYNC_ENABLED = true;

  /** Run an events pass and a listings pass at startup (when SYNC_ENABLED). */
  @EnvBool()
  SYNC_ON_STARTUP = true;

  @EnvInt(100, DAY_MS)
  @Retried({
    unit: 'ms',
    bounds: 'pause after an events pass ends before the next one',
    where: 'catalog-sync/catalog-sync.scheduler.ts',
  })
  SYNC_EVENTS_INTERVAL_MS = 60_000;

  @EnvInt(100, DAY_MS)
  @Retried({
    unit: 'ms',
    bounds: 'pause after a listings pass ends before the next one',
    where: 'catalog-sync/catalog-sync.scheduler.ts',
  })
  SYNC_LISTINGS_INTERVAL_MS = 300_000;

  /** Each scheduled pass starts after its interval plus a random 0..SYNC_JITTER_MS (spreads replicas). */
  @EnvInt(0, 3_600_000)
  @Retried({
    unit: 'ms',
    bounds: 'random 0..this added to every scheduled pause',
    where: 'catalog-sync/catalog-sync.scheduler.ts',
  })
  SYNC_JITTER_MS = 5000;

  /** A lease not renewed for this long may be taken over (renewed every third of it while a pass runs). */
  @EnvInt(300, 600_000)
  @Retried({
    unit: 'ms',
    bounds: "a pass's lease (renewed every third of it while the pass runs; taken over after it lapses)",
    where: 'catalog-sync/sync-lease.ts, sync-pass.runner.ts',
  })
  SYNC_LEASE_TTL_MS = 30_000;

  /** Upstream page size of sync walks (the contract's maximum is 1000). */
  @EnvInt(1, 1000)
  @Retried({
    unit: 'count',
    bounds: 'items per upstream page of a pass (pages = items / this)',
    where: 'catalog-sync/sync-pass.runner.ts',
  })
  SYNC_PAGE_SIZE = 1000;

  /**
   * Rows written per database transaction of a pass: consecutive pages are mapped into one batch (one COPY
   * and one merge) while the previous batch is written. Bounds the pass's memory with the page size.
   */
  @EnvInt(1, 100_000)
  SYNC_WRITE_BATCH_ROWS = 5000;

  /** A resource whose last complete pass is older than this is reported stale (degraded) in readiness. */
  @EnvInt(1000, 30 * DAY_MS)
  @Retried({
    unit: 'ms',
    bounds: 'age of the last completed pass after which readiness reports the resource stale',
    where: 'catalog-sync/sync-pass.status.ts',
  })
  SYNC_STALE_AFTER_MS = 900_000;

  /** After this long from startup, readiness requires a complete pass for each resource. */
  @EnvInt(0, DAY_MS)
  @Retried({
    unit: 'ms',
    bounds: 'time from startup before readiness requires a completed pass per resource',
    where: 'catalog-sync/sync-pass.status.ts',
  })
  SYNC_READY_GRACE_MS = 120_000;

  /** How often the cached protocol config is refetched. */
  @EnvInt(1000, 7 * DAY_MS)
  @Retried({
    unit: 'ms',
    bounds:
      'pause between protocol config refetches (a failed one keeps the cached config); also the age past which a replica re-reads the stored config: the one cache checkout, selling and the read API use',
    where: 'catalog-sync/catalog-sync.scheduler.ts, catalog-sync/protocol-config.cache.ts',
  })
  SYNC_PROTOCOL_CONFIG_REFRESH_MS = 3_600_000;

  /**
   * The served-accuracy sampler (docs/catalog-sync.md "Served accuracy"): every this long each replica re-reads live
   * one listing it served in the last minute (one walk of that listing's event: one upstream page for an event of up
   * to 1,000 listings). 0 = off.
   */
  @EnvInt(0, 3_600_000)
  @Retried({
    unit: 'ms',
    bounds:
      "pause between two served-accuracy samples of a replica (one live walk of a served listing's event each: 0.2 upstream page/s per replica at the default, for events of up to 1,000 listings); 0 = off",
    where: 'catalog-sync/served-accuracy.sampler.ts',
  })
  MIRROR_ACCURACY_SAMPLE_INTERVAL_MS = 5000;

  /** Progress of a running pass is logged at most this often. */
  @EnvInt(100, 600_000)
  @Retried({
    unit: 'ms',
    bounds: 'progress log lines of a running pass',
    where: 'catalog-sync/sync-pass.runner.ts',
  })
  SYNC_PROGRESS_LOG_MS = 5000;

  /**
   * Live catalog (docs/catalog-sync.md): a hot event (read, ordered, starting soon) is walked again once its
   * data is older than this.
   */
  @EnvInt(500, DAY_MS)
  SYNC_HOT_TARGET_MS = 2000;

  /**
   * Floor between two walks of one hot event: while the hot budget and SYNC_HOT_CONCURRENCY have room, hot
   * events are walked again down to this interval (SYNC_HOT_TARGET_MS stays the ceiling, walked first).
   */
  @EnvInt(100, DAY_MS)
  @Retried({
    unit: 'ms',
    bounds:
      'shortest time between two walks of one hot event when the budget has room (SYNC_HOT_TARGET_MS is the ceiling, this the floor); the hot-walk timer ticks at least every half of it',
    where: 'catalog-sync/hot-walk.scheduler.ts',
  })
  SYNC_HOT_MIN_INTERVAL_MS = 500;

  /** At most this many hot events (the most demanded first; events starting soon count as demanded). */
  @EnvInt(1, 100_000)
  SYNC_HOT_MAX_EVENTS = 200;

  /**
   * Hot walks of more than one page (each holds a pooled connection) running at once on this replica; one-page
   * walks run as many at once as the hot budget needs, at least this and at most 3× this (catalog-sync/hot-budget.ts).
   */
  @EnvInt(1, 64)
  SYNC_HOT_CONCURRENCY = 4;

  /** Demand (reads, orders) of an event halves every this long; an event read once stays hot about this long. */
  @EnvInt(1000, DAY_MS)
  SYNC_HOT_DEMAND_HALF_LIFE_MS = 30_000;

  /** An event starting within this long is hot (0: starting soon does not make an event hot). */
  @EnvInt(0, 30 * DAY_MS)
  SYNC_HOT_STARTS_WITHIN_MS = 3_600_000;

  /**
   * Share of this replica's upstream rate kept for full passes while one runs here, in percent: hot walks are
   * paced to the rest, so full passes (the cold tail and its removals) are never starved.
   */
  @EnvInt(5, 95)
  SYNC_FULL_PASS_MIN_SHARE_PCT = 30;
}

/** Reads and validates the sync variables (throws ConfigValidationError naming every bad one). */
export function loadSyncConfig(env: NodeJS.ProcessEnv = process.env): SyncConfig {
  return validateEnvClass(SyncConfig, env);
}
