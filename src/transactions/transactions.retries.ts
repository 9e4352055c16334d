import type { TransactionsConfig } from '../config/transactions.config';
import type { UpstreamConfig } from '../config/upstream.config';
import { describedSettings, type RetryDescription } from '../config/retry-description';
import { finite, num, unbounded, type Bound } from '../common/worst-case';
import { backoffCeiling, type BackoffSettings } from '../durable-work/backoff.policy';
import { worstRetryDelay } from '../durable-work/backoff.retries';
import { upstreamCallWorstCase } from '../upstream/upstream.retries';
import { txBackoffSettings } from './transactions.backoff';

/** The ledger's retry-like settings (docs/RETRIES.md), the variables with their values in `t`. */
export function transactionsRetries(t: TransactionsConfig): RetryDescription[] {
  return describedSettings(t, 'transactions', 'transactions.config.ts');
}

export interface LedgerWorstCase {
  backoff: BackoffSettings;
  /** TX_BLOCKHASH_LIFETIME_MS + TX_GIVE_UP_GRACE_MS. */
  giveUpAfterSignMs: number;
  signing: { delayCeilingMs: number; calls: Bound; httpAttempts: Bound; time: Bound };
  submissions: { calls: Bound; httpAttempts: Bound; time: Bound; timeWithRetryAfter: Bound };
  afterFinal: {
    /** Largest backoff ceiling between two runs of a failing handler (it grows with its runs). */
    delayCeilingMs: number;
    /** A handler registered without a limit (checkout's order wake-up). */
    unlimitedRuns: Bound;
  };
}

/** Per ledger transaction: the tracker's repeats of an unknown signing, its re-sends until final or give-up. */
export function ledgerWorstCase(config: {
  transactions: TransactionsConfig;
  upstream: UpstreamConfig;
}): LedgerWorstCase {
  const { transactions: t, upstream: u } = config;
  const backoff = txBackoffSettings(t);
  const interval = t.TX_TRACKER_INTERVAL_MS;
  const attempts = u.UPSTREAM_MAX_ATTEMPTS;
  const sign = upstreamCallWorstCase(u, 'sign').time.value ?? 0;
  const submit = upstreamCallWorstCase(u, 'submit').time.value ?? 0;
  // Each tracker repeat raises sign_attempts, so the ceiling doubles up to the maximum; the worst case in calls
  // is every draw at 0 (full jitter), i.e. one repeat per tracker interval.
  const ceiling = backoffCeiling(backoff, 30);
  const window = t.TX_SIGN_RESOLVE_WINDOW_MS;
  const signCalls = Math.floor(window / interval) + 1;
  const signTime = window + sign;
  const giveUpAfterSignMs = t.TX_BLOCKHASH_LIFETIME_MS + t.TX_GIVE_UP_GRACE_MS;
  const sends = 1 + Math.floor(giveUpAfterSignMs / interval) + 1;
  const lastDelay = worstRetryDelay(backoff, 30, false);
  const sendTime = giveUpAfterSignMs + 2 * submit + lastDelay + interval;
  const withRetryAfter = sendTime - lastDelay + Math.max(lastDelay, backoff.retryAfterCapMs);
  return {
    backoff,
    giveUpAfterSignMs,
    signing: {
      delayCeilingMs: ceiling,
      calls: finite(signCalls, `floor(${num(window)} / ${num(interval)}) + 1 = ${num(signCalls)}`),
      httpAttempts: finite(
        signCalls * attempts,
        `${num(signCalls)} × ${attempts} = ${num(signCalls * attempts)}`,
      ),
      time: finite(
        signTime,
        `window ${num(window)} + last call ${num(sign)} = ${num(signTime)} ms (then left in \`signing\`)`,
      ),
    },
    submissions: {
      calls: finite(
        sends,
        `1 first + floor(${num(giveUpAfterSignMs)} / ${num(interval)}) + 1 after give-up time = ${num(sends)}`,
      ),
      httpAttempts: finite(sends * attempts, `${num(sends)} × ${attempts} = ${num(sends * attempts)}`),
      time: finite(
        sendTime,
        `${num(t.TX_BLOCKHASH_LIFETIME_MS)} + ${num(t.TX_GIVE_UP_GRACE_MS)} + 2 × ${num(submit)} + ` +
          `${num(lastDelay)} + ${num(interval)} = ${num(sendTime)} ms`,
      ),
      timeWithRetryAfter: finite(
        withRetryAfter,
        `as above with the last wait the capped Retry-After ${num(backoff.retryAfterCapMs)} ms = ` +
          `${num(withRetryAfter)} ms`,
      ),
    },
    afterFinal: {
      delayCeilingMs: ceiling,
      unlimitedRuns: unbounded(
        `the handler throws: its backoff ceiling doubles per run up to ${num(ceiling)} ms`,
      ),
    },
  };
}
