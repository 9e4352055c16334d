import type { UpstreamConfig } from '../config/upstream.config';
import { constantSetting, describedSettings, type RetryDescription } from '../config/retry-description';
import { finite, num, type Bound } from '../common/worst-case';
import { fullJitterDelay } from './http/backoff';
import { RATE_LIMIT_RECOVERY_INTERVAL_MS, RATE_LIMIT_RECOVERY_STEP } from './http/rate-limiter';
import { MIN_ATTEMPT_MS } from './http/retry-loop';
import { DEFAULT_RETRY_AFTER_SECONDS } from './upstream-error.mapper';
import { VERIFY_KEY_MAX_ATTEMPTS } from './upstream.client';
import { DEFAULT_MAX_PAGES } from './wire/pagination';

/** The upstream client's retry-like settings (docs/RETRIES.md), the variables with their values in `u`. */
export function upstreamRetries(u: UpstreamConfig): RetryDescription[] {
  return [
    ...describedSettings(u, 'upstream', 'upstream.config.ts'),
    constantSetting('upstream', 'MIN_ATTEMPT_MS', MIN_ATTEMPT_MS, {
      unit: 'ms',
      bounds: 'no retry is started with less time than this left before the deadline',
      where: 'src/upstream/http/retry-loop.ts `MIN_ATTEMPT_MS`',
    }),
    constantSetting('upstream', 'RATE_LIMIT_RECOVERY_INTERVAL_MS', RATE_LIMIT_RECOVERY_INTERVAL_MS, {
      unit: 'ms',
      bounds: 'each quiet interval adds back a step of the maximum rate',
      where: 'src/upstream/http/rate-limiter.ts `RATE_LIMIT_RECOVERY_INTERVAL_MS`',
    }),
    constantSetting('upstream', 'RATE_LIMIT_RECOVERY_STEP', RATE_LIMIT_RECOVERY_STEP, {
      unit: 'factor',
      bounds: 'share of UPSTREAM_RATE_LIMIT_RPS added back per quiet interval',
      where: 'src/upstream/http/rate-limiter.ts `RATE_LIMIT_RECOVERY_STEP`',
    }),
    constantSetting('upstream', 'VERIFY_KEY_MAX_ATTEMPTS', VERIFY_KEY_MAX_ATTEMPTS, {
      unit: 'count',
      bounds: `attempts of a key check, within min(UPSTREAM_DEADLINE_MS, ${VERIFY_KEY_MAX_ATTEMPTS} × UPSTREAM_READ_TIMEOUT_MS)`,
      where: 'src/upstream/upstream.client.ts `VERIFY_KEY_MAX_ATTEMPTS`',
    }),
    constantSetting('upstream', 'DEFAULT_MAX_PAGES', DEFAULT_MAX_PAGES, {
      unit: 'count',
      bounds: 'pages of one walk (sync passes); more ends the walk with BAD_RESPONSE',
      where: 'src/upstream/wire/pagination.ts `DEFAULT_MAX_PAGES`',
    }),
    constantSetting('upstream', 'DEFAULT_RETRY_AFTER_SECONDS', DEFAULT_RETRY_AFTER_SECONDS, {
      unit: 's',
      bounds: 'Retry-After our HTTP answers give for an upstream 429 that carried none',
      where: 'src/upstream/upstream-error.mapper.ts `DEFAULT_RETRY_AFTER_SECONDS`',
    }),
  ];
}

/** The in-call backoff ceiling after attempt `attempt` failed (http/backoff.ts with random = 1). */
export function upstreamBackoffCeiling(config: UpstreamConfig, attempt: number): number {
  // resolveUpstreamOptions raises maxDelayMs to baseDelayMs when it is lower.
  const max = Math.max(config.UPSTREAM_BACKOFF_MAX_MS, config.UPSTREAM_BACKOFF_BASE_MS);
  return fullJitterDelay(attempt, config.UPSTREAM_BACKOFF_BASE_MS, max, () => 1);
}

export type UpstreamCallKind = 'read' | 'sign' | 'submit';

export interface UpstreamCallWorstCase {
  kind: UpstreamCallKind;
  attempts: number;
  attemptTimeoutMs: number;
  /** Worst wait before attempt 2, 3, …: the backoff ceiling, or a Retry-After up to the cap when larger. */
  waitsMs: number[];
  time: Bound;
}

/** One upstream call (any method): attempts and time, whatever the upstream answers. */
export function upstreamCallWorstCase(u: UpstreamConfig, kind: UpstreamCallKind): UpstreamCallWorstCase {
  const attempts = u.UPSTREAM_MAX_ATTEMPTS;
  const attemptTimeoutMs =
    kind === 'read'
      ? u.UPSTREAM_READ_TIMEOUT_MS
      : kind === 'sign'
        ? u.UPSTREAM_SIGN_TIMEOUT_MS
        : u.UPSTREAM_SUBMIT_TIMEOUT_MS;
  const waitsMs = Array.from({ length: attempts - 1 }, (_, i) =>
    Math.max(upstreamBackoffCeiling(u, i + 1), u.UPSTREAM_RETRY_AFTER_CAP_MS),
  );
  const unlimited = attempts * attemptTimeoutMs + waitsMs.reduce((a, b) => a + b, 0);
  const time = Math.min(u.UPSTREAM_DEADLINE_MS, unlimited);
  const waits = waitsMs.length === 0 ? '' : ` + ${waitsMs.map(num).join(' + ')}`;
  return {
    kind,
    attempts,
    attemptTimeoutMs,
    waitsMs,
    time: finite(
      time,
      `min(deadline ${num(u.UPSTREAM_DEADLINE_MS)}, ${attempts} × ${num(attemptTimeoutMs)}${waits}) = ${num(time)} ms`,
    ),
  };
}
