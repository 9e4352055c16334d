import type { TransactionsConfig } from '../config/transactions.config';

/**
 * How long until the tracker's next look at a row after `attempt` attempts: TX_RESUBMIT_BASE_DELAY_MS,
 * doubling per attempt up to TX_RESUBMIT_MAX_DELAY_MS. Used for a signing whose outcome is unknown
 * (TransactionsSigner), the next re-submission (TransactionsSubmitter) and a failed after-final handler
 * (TransactionsTrackerWork).
 */
export function delayFor(config: TransactionsConfig, attempt: number): number {
  const { TX_RESUBMIT_BASE_DELAY_MS: base, TX_RESUBMIT_MAX_DELAY_MS: max } = config;
  return Math.min(max, base * 2 ** Math.min(20, Math.max(0, attempt - 1)));
}
