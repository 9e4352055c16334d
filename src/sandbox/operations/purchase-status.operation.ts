import type { SandboxCore } from '../sandbox.core';
import { jsonReply, problemReply, type SandboxReply } from '../http/reply';
import { idempotencyKeyProblem } from './signing.operation';

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

/**
 * Purchase status by the idempotency key used to sign accept_offer_v2 (contract 4.6). Scoped like signing
 * idempotency: the same API key must ask. `status` is `signed` (not submitted yet), `processing`,
 * `confirmed`, `landed_with_error` or `expired`. Keys of other instructions, other API keys and forgotten
 * keys are 404.
 */
export function purchaseStatus(
  core: SandboxCore,
  apiKeyName: string,
  key: string | string[] | undefined,
  extraFields: boolean,
): SandboxReply {
  const problem = idempotencyKeyProblem(key);
  if (problem !== undefined)
    return problemReply(400, 'bad_request', problem.replace('header', 'query parameter'));
  const now = core.settle();
  const entry = core.idempotency.get(apiKeyName, key as string, now);
  const record = entry === undefined ? undefined : core.registry.get(entry.transactionId);
  if (record === undefined || record.instruction !== 'accept_offer_v2') {
    return problemReply(404, 'not_found', 'no purchase was signed with this idempotency key');
  }
  const status = core.registry.stateOf(record, now);
  return jsonReply(200, {
    idempotency_key: record.idempotencyKey,
    status,
    custodial_transaction_id: record.id,
    transaction_signature: record.transactionSignature,
    wallet_kind: record.kind,
    subject: record.subject,
    signer_address: record.body.signerAddress,
    items: record.pairs.map((p) => ({ event_id: p.eventId.toString(), ticket_id: p.ticketId.toString() })),
    failure_reason: record.failureReason ?? null,
    signed_at: iso(record.signedAtMs),
    submitted_at: iso(record.submittedAtMs),
    updated_at: iso(record.updatedAtMs),
    ...(extraFields ? { x_sandbox_extra: { note: 'unknown field injected by a fault' } } : {}),
  });
}
