/**
 * The status page's arithmetic, pure (no I/O, no clock): minute buckets, percentiles, rates, the retention
 * cut-off, upstream counter deltas and the kind of a failed sync pass. Every time is epoch ms of the database
 * clock, as the samples are stamped.
 */

export const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

/** One sample as read back: the minute it counts (its start) and its value. */
export interface MinuteSample {
  minute: number;
  value: number;
}

export interface SeriesPoint {
  minute: number;
  value: number | null;
}

/** The start of the minute `ms` falls in. */
export function minuteOf(ms: number): number {
  return Math.floor(ms / MINUTE_MS) * MINUTE_MS;
}

/**
 * One point per minute from `from` to `to` (both minute starts, inclusive): the sum of the samples of that minute
 * (replicas and labels added up), or `fill` where there is none — 0 for counts (nothing happened), null for
 * figures that are not counts (a percentile of no orders is no value, drawn as a gap).
 */
export function minuteSeries(
  samples: readonly MinuteSample[],
  from: number,
  to: number,
  options: { fill?: number | null } = {},
): SeriesPoint[] {
  const fill = options.fill === undefined ? 0 : options.fill;
  const sums = new Map<number, number>();
  for (const sample of samples) sums.set(sample.minute, (sums.get(sample.minute) ?? 0) + sample.value);
  const points: SeriesPoint[] = [];
  for (let minute = minuteOf(from); minute <= to; minute += MINUTE_MS) {
    points.push({ minute, value: sums.get(minute) ?? fill });
  }
  return points;
}

/** Nearest-rank percentile (p in 1..100) of `values`; null when there are none. */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] ?? null;
}

/** `count` over `ms` milliseconds, per second (0 when no time passed). */
export function perSecond(count: number, ms: number): number {
  return ms > 0 ? (count * 1000) / ms : 0;
}

/** Samples of minutes before this one are deleted (minute start, `hours` before the current minute). */
export function retentionCutoff(nowMs: number, hours: number): number {
  return minuteOf(nowMs) - hours * HOUR_MS;
}

/** A per-replica count to add to the current minute's row (`instance_id` = the replica). */
export interface MinuteDelta {
  figure: string;
  label: string;
  value: number;
}

/** A per-replica upstream sample to add to the current minute's row. */
export interface UpstreamDelta extends MinuteDelta {
  figure: 'upstream.requests' | 'upstream.errors' | 'upstream.throttled';
  label: string;
  value: number;
}

/**
 * Attempt statuses (src/upstream/http/metrics.ts) that are no request to the upstream: the client failed fast
 * (circuit open, bulkhead full) or its caller gave up (cancelled: usually while queued, and never an answer to
 * count). Counting them would show an open circuit as a burst of upstream errors.
 */
const NOT_SENT: ReadonlySet<string> = new Set(['circuit_open', 'overloaded', 'cancelled']);

/**
 * The upstream attempts since the last read, from two readings of `upstream_requests_total` keyed
 * `operation|status` (status: an HTTP status or timeout/network/circuit_open/…): requests (every attempt sent:
 * an HTTP status, a timeout or a network failure), errors (those without a 2xx, 429s included) and 429s, by
 * operation. Attempts never sent (NOT_SENT) are left out. A counter that went down (the registry was reset)
 * counts from zero.
 */
export function upstreamDeltas(
  before: ReadonlyMap<string, number>,
  now: ReadonlyMap<string, number>,
): UpstreamDelta[] {
  const byOperation = new Map<string, { requests: number; errors: number; throttled: number }>();
  for (const [key, total] of now) {
    const previous = before.get(key) ?? 0;
    const delta = total >= previous ? total - previous : total;
    if (delta <= 0) continue;
    const split = key.lastIndexOf('|');
    const operation = key.slice(0, split);
    const status = key.slice(split + 1);
    if (NOT_SENT.has(status)) continue;
    const sums = byOperation.get(operation) ?? { requests: 0, errors: 0, throttled: 0 };
    sums.requests += delta;
    if (!/^2\d\d$/.test(status)) sums.errors += delta;
    if (status === '429') sums.throttled += delta;
    byOperation.set(operation, sums);
  }
  const deltas: UpstreamDelta[] = [];
  for (const [label, sums] of byOperation) {
    deltas.push({ figure: 'upstream.requests', label, value: sums.requests });
    if (sums.errors > 0) deltas.push({ figure: 'upstream.errors', label, value: sums.errors });
    if (sums.throttled > 0) deltas.push({ figure: 'upstream.throttled', label, value: sums.throttled });
  }
  return deltas;
}

/** Why a sync pass did not complete, for an operator: what to fix. */
export type SyncFailureKind = 'auth' | 'config' | 'upstream_unavailable' | 'database' | 'cancelled' | 'other';

const UPSTREAM = /^UpstreamError: upstream \w+: (.*)$/s;
const DATABASE =
  /^(DatabaseConnectionLostError|DatabaseBusyError|QueryFailedError|LeaseLostError|MigrationLockTimeoutError|error):/;

/**
 * The kind of a failed or cancelled pass, from its recorded `error` (`<ErrorName>: <message>`, written by the
 * pass runner; upstream messages begin with the HTTP status when there was one). auth: the upstream refused the
 * key (401/403); config: the upstream answered something the configured address and protocol should never give
 * (404, another 4xx, an unreadable body); upstream_unavailable: 5xx, 429, timeouts, connection failures;
 * database: the connection, a statement or the pass's lease.
 */
export function classifySyncFailure(status: string, error: string | null): SyncFailureKind {
  if (status === 'cancelled') return 'cancelled';
  if (error === null) return 'other';
  const upstream = UPSTREAM.exec(error);
  if (upstream) {
    const message = upstream[1] ?? '';
    if (/^(401|403):/.test(message)) return 'auth';
    if (/^(4\d\d):/.test(message) && !message.startsWith('429:')) return 'config';
    if (/not valid JSON|unexpected HTTP status|request refused before sending/.test(message)) return 'config';
    return 'upstream_unavailable';
  }
  if (DATABASE.test(error)) return 'database';
  return 'other';
}

/** A database-derived figure of one past minute (written once for every replica). */
export interface MinuteFigure {
  figure: string;
  label: string;
  minute: number;
  value: number;
}

/** The marker figure: the minute's finals were recorded (written even when there were none). */
export const ORDERS_RECORDED = 'orders.finals';

/** One minute's database-derived figures: the marker, written first, and the rest, stored only with it. */
export interface MinuteFigures {
  marker: MinuteFigure;
  figures: MinuteFigure[];
}

/**
 * The figures of one minute's finals from their counts by outcome (final state) and attempt number (all of the
 * minute's finals) and a sample of their times from order to final (`durations`, ms): count by outcome, count by
 * attempt number, p50 and p99 of the sample, and the marker (the number of finals, also when 0).
 */
export function orderFigures(
  minute: number,
  counts: readonly { state: string; attempt: number; count: number }[],
  durations: readonly number[],
): MinuteFigures {
  const marker: MinuteFigure = { figure: ORDERS_RECORDED, label: '', minute, value: 0 };
  const figures: MinuteFigure[] = [];
  const add = (figure: string, label: string, n: number): void => {
    const found = figures.find((f) => f.figure === figure && f.label === label);
    if (found) found.value += n;
    else figures.push({ figure, label, minute, value: n });
  };
  for (const { state, attempt, count } of counts) {
    if (count <= 0) continue;
    marker.value += count;
    add('orders.final', state, count);
    add('orders.attempts', String(attempt), count);
  }
  const p50 = percentile(durations, 50);
  const p99 = percentile(durations, 99);
  if (p50 !== null) figures.push({ figure: 'orders.final_p50_ms', label: '', minute, value: p50 });
  if (p99 !== null) figures.push({ figure: 'orders.final_p99_ms', label: '', minute, value: p99 });
  return { marker, figures };
}

/** Per-replica figures of the served-accuracy sampler and the read path's staleness (docs/status.md). */
export const MIRROR_SAMPLED = 'mirror.sampled';
export const MIRROR_STALE = 'mirror.stale';
export const MIRROR_STALENESS_SUM = 'mirror.staleness_sum';
export const MIRROR_STALENESS_COUNT = 'mirror.staleness_count';

/**
 * What each total keyed `figure|label` grew by since the last reading, as rows to add to the current minute; a
 * total that went down (a restart, a reset registry) counts from zero, one that did not grow adds nothing.
 */
export function counterDeltas(
  before: ReadonlyMap<string, number>,
  now: ReadonlyMap<string, number>,
): MinuteDelta[] {
  const deltas: MinuteDelta[] = [];
  for (const [key, total] of now) {
    const previous = before.get(key) ?? 0;
    const value = total >= previous ? total - previous : total;
    if (value <= 0) continue;
    const split = key.indexOf('|');
    deltas.push({ figure: key.slice(0, split), label: key.slice(split + 1), value });
  }
  return deltas;
}

/** Buyable share in percent (one decimal) of `sampled` samples of which `stale` were not; null with no sample. */
export function accuracyPercent(sampled: number, stale: number): number | null {
  if (sampled <= 0) return null;
  return Math.round((1000 * Math.max(0, sampled - stale)) / sampled) / 10;
}

/** `sum / count` to two decimals, null when nothing was counted (a gap in a plot, not a zero). */
export function meanOrNull(sum: number, count: number): number | null {
  return count > 0 ? Math.round((sum / count) * 100) / 100 : null;
}
