/**
 * When a failed delivery is tried again (Standard Webhooks' recommended schedule, as Svix runs it): after the
 * 1st failed try 5 s, then 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; a failure of the 8th try marks the delivery
 * failed (about 27.6 h after the first). Each delay gets ±JITTER of itself, so the endpoints of one outage are
 * not all retried in the same second. docs/RETRIES.md lists it (webhooks.retries.ts).
 */
export const RETRY_SCHEDULE_MS: readonly number[] = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];

/** Tries of one delivery in all: the first and one per scheduled retry. */
export const MAX_DELIVERY_ATTEMPTS = RETRY_SCHEDULE_MS.length + 1;

/** Each retry delay is drawn uniformly from delay·(1 ± RETRY_JITTER). */
export const RETRY_JITTER = 0.1;

/** What follows a failed try. */
export type AfterFailure = { kind: 'retry'; delayMs: number } | { kind: 'failed' };

/**
 * What follows the failure of try number `attempts` (1 = the first send): the next try after the schedule's
 * delay with jitter, or `failed` when it was the last. A manual retry past the schedule gets one try, then fails.
 * `random` in [0, 1) is injectable for tests.
 */
export function afterFailure(attempts: number, random: () => number = Math.random): AfterFailure {
  const base = RETRY_SCHEDULE_MS[attempts - 1];
  if (base === undefined) return { kind: 'failed' };
  const jitter = (random() * 2 - 1) * RETRY_JITTER * base;
  return { kind: 'retry', delayMs: Math.round(base + jitter) };
}

/** The longest wait after failed try `attempts` (the jitter's top), 0 past the schedule. */
export function retryCeilingMs(attempts: number): number {
  const base = RETRY_SCHEDULE_MS[attempts - 1];
  return base === undefined ? 0 : Math.ceil(base * (1 + RETRY_JITTER));
}
