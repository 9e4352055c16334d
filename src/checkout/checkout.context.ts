import { createHash } from 'node:crypto';
import type { LedgerRecord, TransactionsService } from '../transactions/transactions.service';
import type { Revalidation } from './checkout.integrator';
import type { OrderEntity } from './order.entity';

/** A live revalidation started before the order was committed (checkout.service.ts): its result or error. */
export type PrefetchedRevalidation = { value: Revalidation } | { error: unknown };

/** What one send of the signed bytes gave: the ledger's record after the answer, or the error. */
export type Sent = { record: LedgerRecord; answeredAt?: number } | { error: unknown };

/** What a step leaves: the committed order to continue with, or null (handed back or fenced out). */
export type StepResult = Promise<OrderEntity | null>;

/** What one drive carries from step to step in memory (never needed after a crash: the rows say it all). */
export interface DriveContext {
  /** The order's ledger transaction as the last step left it (saves re-reading it). */
  record: LedgerRecord | null;
  /** When to re-send for the status next: POLL after the previous answer, like any client polling. */
  nextPollAt: number;
  /** Attempt 1's live read, started alongside the order's insert; used once, by the first revalidate step. */
  revalidation?: Promise<PrefetchedRevalidation>;
}

/** The order fields its attempt keys are derived from. */
export type KeyedOrder = Pick<OrderEntity, 'id' | 'clientId' | 'idempotencyKey' | 'attempt' | 'attemptKeys'>;

/** SHA-256 of a client's Idempotency-Key, hex: a fixed 64 characters whatever the key's length (1..255). */
export function clientKeyHash(idempotencyKey: string): string {
  return createHash('sha256').update(idempotencyKey, 'utf8').digest('hex');
}

/**
 * The ledger's transaction key of an order's attempt (one ledger transaction per attempt, unique per client).
 * Orders made since issue 23 (`client_key`) derive it from the client's Idempotency-Key, not from the order's
 * row id, and so does the upstream key derived from it (`upstreamKeyOf`): if the order's row is lost (a restore,
 * a failover to an asynchronous standby), the client's retry with the same key makes a new order whose attempt 1
 * has the lost attempt 1's keys, and the upstream answers it with the first transaction instead of a second
 * purchase. Orders made before keep their row-id keys (`order_id`) so an attempt in flight across the upgrade
 * keeps its key.
 */
export function transactionKey(
  order: Pick<KeyedOrder, 'id' | 'idempotencyKey' | 'attempt' | 'attemptKeys'>,
): string {
  return order.attemptKeys === 'client_key'
    ? `checkout:${order.attempt}:${clientKeyHash(order.idempotencyKey)}`
    : `checkout:${order.id}:${order.attempt}`;
}

/** Which order an attempt's ledger key names: its row id (`order_id` keys) or its client key's hash. */
export type AttemptOfKey = { attempt: number } & ({ orderId: string } | { clientKeyHash: string });

/** The order and attempt a ledger transaction key names (`transactionKey`), or null for any other key. */
export function attemptOfKey(key: string): AttemptOfKey | null {
  const byClientKey = /^checkout:([1-9][0-9]{0,3}):([0-9a-f]{64})$/.exec(key);
  if (byClientKey) return { attempt: Number(byClientKey[1]), clientKeyHash: byClientKey[2] };
  const byRow = /^checkout:([0-9a-f-]{36}):([1-9][0-9]{0,3})$/.exec(key);
  return byRow ? { orderId: byRow[1], attempt: Number(byRow[2]) } : null;
}

/** Upstream idempotency key of an attempt: derived from its ledger key (and client), so every retry reuses it. */
export function upstreamKeyOf(
  transactions: Pick<TransactionsService, 'upstreamKeyFor'>,
  order: KeyedOrder,
): string {
  return transactions.upstreamKeyFor(order.clientId, transactionKey(order));
}
