import type { TransactionsService } from '../transactions/transactions.service';
import type { Revalidation } from './checkout.integrator';
import type { OrderEntity } from './order.entity';

/** After-final handler name the order's ledger transactions carry: wakes the order at once. */
export const CHECKOUT_ON_FINAL = 'checkout.order';

/** The order's ledger transaction, as the transactions module returns it. */
export type TxRecord = Awaited<ReturnType<TransactionsService['sign']>>['record'];

/** A live revalidation started before the order was committed (checkout.service.ts): its result or error. */
export type PrefetchedRevalidation = { value: Revalidation } | { error: unknown };

/** What one send of the signed bytes gave: the ledger's record after the answer, or the error. */
export type Sent = { record: TxRecord; answeredAt?: number } | { error: unknown };

/** What a step leaves: the committed order to continue with, or null (handed back or fenced out). */
export type StepResult = Promise<OrderEntity | null>;

/** What one drive carries from step to step in memory (never needed after a crash: the rows say it all). */
export interface DriveContext {
  /** The order's ledger transaction as the last step left it (saves re-reading it). */
  record: TxRecord | null;
  /** When to re-send for the status next: POLL after the previous answer, like any client polling. */
  nextPollAt: number;
  /** Attempt 1's live read, started alongside the order's insert; used once, by the first revalidate step. */
  revalidation?: Promise<PrefetchedRevalidation>;
}

/** The ledger's transaction key of an order's attempt (one ledger transaction per attempt). */
export function transactionKey(order: Pick<OrderEntity, 'id' | 'attempt'>): string {
  return `checkout:${order.id}:${order.attempt}`;
}

/** The order and attempt a ledger transaction key names (`transactionKey`), or null for any other key. */
export function attemptOfKey(key: string): { orderId: string; attempt: number } | null {
  const match = /^checkout:([0-9a-f-]{36}):([1-9][0-9]{0,3})$/.exec(key);
  return match ? { orderId: match[1], attempt: Number(match[2]) } : null;
}

/** Upstream idempotency key of an attempt: derived from (order, attempt), so every retry reuses it. */
export function upstreamKeyOf(
  transactions: Pick<TransactionsService, 'upstreamKeyFor'>,
  order: Pick<OrderEntity, 'id' | 'clientId' | 'attempt'>,
): string {
  return transactions.upstreamKeyFor(order.clientId, transactionKey(order));
}
