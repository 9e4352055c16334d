import { createHash, createHmac } from 'node:crypto';
import type { InstructionBatch } from '../upstream/upstream.types';
import { canonicalBatchJson } from './instruction-batch.parser';
import type { WalletKind } from './ledger-transaction.entity';

/**
 * The upstream idempotency key for a client's key: `bff1-` + base64url(HMAC-SHA256(secret, client id, key)),
 * 48 characters. Deterministic, so every retry (the caller's or the tracker's) reuses it; keyed by the client,
 * so two clients using the same key never collide upstream; and the client's own key is not sent upstream.
 */
export function deriveUpstreamKey(secret: string, clientId: string, key: string): string {
  const mac = createHmac('sha256', secret).update(`${clientId}\n${key}`, 'utf8').digest('base64url');
  return `bff1-${mac}`;
}

/** sha256 of what makes two signing requests "the same": wallet kind, subject and canonical batch. */
export function requestFingerprint(kind: WalletKind, subject: string, batch: InstructionBatch): string {
  return createHash('sha256')
    .update(`${kind}\n${subject}\n${canonicalBatchJson(batch)}`, 'utf8')
    .digest('hex');
}

/** Digest by which POST /v1/transactions/submissions finds the record of a signed transaction. */
export function signedTransactionDigest(signedTransaction: string): string {
  return createHash('sha256').update(signedTransaction, 'utf8').digest('hex');
}
