import type { TransactionsConfig } from '../config/transactions.config';
import { backoffDelay, retryAfterOf, type BackoffSettings } from '../durable-work/backoff.policy';

/** The ledger queue's settings of the one backoff policy (durable-work/backoff.policy.ts; docs/RETRIES.md). */
export function txBackoffSettings(config: TransactionsConfig): BackoffSettings {
  return {
    baseMs: config.TX_RESUBMIT_BASE_DELAY_MS,
    maxMs: config.TX_RESUBMIT_MAX_DELAY_MS,
    retryAfterCapMs: 4 * config.TX_RESUBMIT_MAX_DELAY_MS,
  };
}

/**
 * How long until the tracker's next look at a row after `attempt` attempts (the policy's delay after
 * `attempt - 1` failures; an error's Retry-After honoured). Used for a signing whose outcome is unknown
 * (TransactionsSigner), the next re-submission (TransactionsSubmitter) and a failed after-final handler
 * (TransactionsTrackerWork).
 */
export function delayFor(config: TransactionsConfig, attempt: number, error?: unknown): number {
  return backoffDelay(txBackoffSettings(config), attempt - 1, retryAfterOf(error));
}
