import { backoffCeiling, type BackoffSettings } from './backoff.policy';

/**
 * Worst delay of one retry of a background queue after `failures` earlier failures: the jitter's ceiling, or the
 * capped Retry-After when that is larger (backoffDelay of backoff.policy.ts; backoff.retries.spec.ts drives it).
 */
export function worstRetryDelay(settings: BackoffSettings, failures: number, withRetryAfter = true): number {
  const ceiling = backoffCeiling(settings, failures);
  return withRetryAfter ? Math.max(ceiling, settings.retryAfterCapMs) : ceiling;
}
