import { AppError } from '../common/app-error';
import { UpstreamError } from '../upstream/upstream.error';

/** One queue's retry schedule (docs/RETRIES.md lists every queue's values). */
export interface BackoffSettings {
  /** The first retry's ceiling. */
  baseMs: number;
  /** No ceiling above this. */
  maxMs: number;
  /** A Retry-After longer than this is cut to it (a misbehaving upstream cannot park an item for hours). */
  retryAfterCapMs: number;
}

/**
 * The one backoff policy of background work: exponential with full jitter (a delay drawn uniformly from
 * 0..min(max, base·2^failures), so replicas retrying the same outage spread out instead of waking together), and a
 * Retry-After the other side asked for honoured up to `retryAfterCapMs`. `failures` counts the item's failed
 * tries so far (0 before the first retry). `random` is injectable for tests.
 */
export function backoffDelay(
  settings: BackoffSettings,
  failures: number,
  retryAfterMs = 0,
  random: () => number = Math.random,
): number {
  const ceiling = backoffCeiling(settings, failures);
  // Uniform over 0..ceiling inclusive (a source returning 1 reads the ceiling itself).
  const jittered = Math.min(ceiling, Math.floor(random() * (ceiling + 1)));
  const asked = Math.min(Math.max(0, retryAfterMs), settings.retryAfterCapMs);
  return Math.max(jittered, asked);
}

/** The largest delay `backoffDelay` can draw after `failures` failures (before Retry-After). */
export function backoffCeiling(settings: BackoffSettings, failures: number): number {
  const n = Math.min(30, Math.max(0, Math.floor(failures)));
  return Math.min(settings.maxMs, settings.baseMs * 2 ** n);
}

/** Whether an item started `startedAtMs` has used its total budget (`budgetMs`) at `nowMs`. */
export function budgetExhausted(startedAtMs: number, budgetMs: number, nowMs: number = Date.now()): boolean {
  return nowMs - startedAtMs > budgetMs;
}

/** The delay an error asks for (an upstream 429/503 Retry-After, or a coded error's), 0 when none. */
export function retryAfterOf(error: unknown): number {
  if (error instanceof UpstreamError) return error.retryAfterMs ?? 0;
  if (error instanceof AppError) return (error.retryAfterSeconds ?? 0) * 1000;
  return 0;
}
