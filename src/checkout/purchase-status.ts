import type { PurchaseStatus } from '../upstream/upstream.types';

/** What a purchase-status record says about a purchase, as far as checkout may act on it. */
export type PurchaseVerdict = 'confirmed' | 'landed_with_error' | 'expired' | 'pending' | 'unknown';

/**
 * Reads a purchase-status record (fields not shown by the contract; the sandbox's are documented). Only an
 * explicit, known status for THIS key counts: a record for another key, an empty record, a null or unknown
 * status says nothing (`unknown`) and can never complete an order or allow a new attempt.
 */
export function interpretPurchaseStatus(record: PurchaseStatus, key: string): PurchaseVerdict {
  const echoed = record.raw.idempotency_key;
  if (echoed !== undefined && echoed !== key) return 'unknown';
  const status = record.status;
  if (status === 'confirmed' || status === 'landed_with_error' || status === 'expired') return status;
  if (status === 'signed' || status === 'processing') return 'pending';
  return 'unknown';
}
