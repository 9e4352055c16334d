import type { SyncConfig } from '../config/sync.config';
import type { UpstreamConfig } from '../config/upstream.config';
import { constantSetting, describedSettings, type RetryDescription } from '../config/retry-description';
import { finite, num, type Bound } from '../common/worst-case';
import { leaseRenewIntervalMs } from '../durable-work/named-lease';
import { upstreamCallWorstCase } from '../upstream/upstream.retries';
import { DEFAULT_MAX_PAGES } from '../upstream/wire/pagination';
import { SYNC_SHUTDOWN_WAIT_MS } from './catalog-sync.service';
import { OBSERVATION_WRITE_TIMEOUT_MS } from './mirror-observations';
import { SAMPLE_WALK_TIMEOUT_MS } from './served-accuracy.sampler';
import { WRITE_MAX_DELAY_MS } from './sync-pass.runner';

/** Catalog sync's retry-like settings (docs/RETRIES.md), the variables with their values in `s`. */
export function catalogSyncRetries(s: SyncConfig): RetryDescription[] {
  return [
    ...describedSettings(s, 'catalog-sync', 'sync.config.ts'),
    constantSetting('catalog-sync', 'SAMPLE_WALK_TIMEOUT_MS', SAMPLE_WALK_TIMEOUT_MS, {
      unit: 'ms',
      bounds: "one accuracy sample's live walk (cut after this; the sample then decides nothing)",
      where: 'src/catalog-sync/served-accuracy.sampler.ts `SAMPLE_WALK_TIMEOUT_MS`',
    }),
    constantSetting('catalog-sync', 'OBSERVATION_WRITE_TIMEOUT_MS', OBSERVATION_WRITE_TIMEOUT_MS, {
      unit: 'ms',
      bounds:
        "wait of checkout's revalidation (and of a sample) for the mirror write of what it observed; past it the " +
        'step goes on and the write finishes, or fails, on its own (counted, logged)',
      where: 'src/catalog-sync/mirror-observations.ts `OBSERVATION_WRITE_TIMEOUT_MS`',
    }),
    constantSetting('catalog-sync', 'WRITE_MAX_DELAY_MS', WRITE_MAX_DELAY_MS, {
      unit: 'ms',
      bounds: 'a batch of pages is written at the latest this long after its first page arrived',
      where: 'src/catalog-sync/sync-pass.runner.ts `WRITE_MAX_DELAY_MS`',
    }),
    constantSetting('catalog-sync', 'SYNC_SHUTDOWN_WAIT_MS', SYNC_SHUTDOWN_WAIT_MS, {
      unit: 'ms',
      bounds: 'wait for cancelled passes on shutdown',
      where: 'src/catalog-sync/catalog-sync.service.ts `SYNC_SHUTDOWN_WAIT_MS`',
    }),
  ];
}

export type SyncPassResource = 'events' | 'listings';

export interface SyncPassWorstCase {
  resource: SyncPassResource;
  items: number;
  pages: number;
  calls: Bound;
  httpAttempts: Bound;
  /** Upstream time of the pass (page calls; database writes not included). */
  time: Bound;
  /** The only bound the code sets on a pass: DEFAULT_MAX_PAGES pages, each one call. */
  capTime: Bound;
  capHttpAttempts: Bound;
  /** Longest pause between two scheduled passes of the resource (after the previous ended). */
  gapMs: Bound;
  leaseRenewMs: number;
}

/** Per sync pass of `items` items (full pages; empty pages in between only add pages). */
export function syncPassWorstCase(
  config: { sync: SyncConfig; upstream: UpstreamConfig },
  resource: SyncPassResource,
  items: number,
): SyncPassWorstCase {
  const { sync: s, upstream: u } = config;
  const pages = Math.max(1, Math.ceil(items / s.SYNC_PAGE_SIZE));
  const attempts = u.UPSTREAM_MAX_ATTEMPTS;
  const call = upstreamCallWorstCase(u, 'read').time.value ?? 0;
  const interval = resource === 'events' ? s.SYNC_EVENTS_INTERVAL_MS : s.SYNC_LISTINGS_INTERVAL_MS;
  const gap = interval + s.SYNC_JITTER_MS;
  return {
    resource,
    items,
    pages,
    calls: finite(pages, `ceil(${num(items)} / ${num(s.SYNC_PAGE_SIZE)}) = ${num(pages)}`),
    httpAttempts: finite(
      pages * attempts,
      `${num(pages)} × (1 + ${attempts - 1} retries) = ${num(pages * attempts)}`,
    ),
    time: finite(pages * call, `${num(pages)} × ${num(call)} = ${num(pages * call)} ms`),
    capTime: finite(
      DEFAULT_MAX_PAGES * call,
      `DEFAULT_MAX_PAGES ${num(DEFAULT_MAX_PAGES)} × ${num(call)} = ${num(DEFAULT_MAX_PAGES * call)} ms`,
    ),
    capHttpAttempts: finite(
      DEFAULT_MAX_PAGES * attempts,
      `${num(DEFAULT_MAX_PAGES)} × ${attempts} = ${num(DEFAULT_MAX_PAGES * attempts)}`,
    ),
    gapMs: finite(gap, `${num(interval)} + jitter ${num(s.SYNC_JITTER_MS)} = ${num(gap)} ms`),
    leaseRenewMs: leaseRenewIntervalMs(s.SYNC_LEASE_TTL_MS),
  };
}
