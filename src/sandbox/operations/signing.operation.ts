import { validateInstructionBatch } from '../http/batch.validation';
import type { SigningOperation } from '../chain/idempotency.store';
import { authorityOf, batchFingerprint } from '../chain/instruction.model';
import type { SandboxCore } from '../sandbox.core';
import { jsonReply, problemReply, type SandboxReply } from '../http/reply';
import { buildSignedTransaction, TransactionTooLargeError } from '../chain/transaction.builder';

export interface SignRequest {
  operation: SigningOperation;
  subject: string;
  idempotencyKey: string | string[] | undefined;
  apiKeyName: string;
  body: unknown;
}

/** Contract limit 1..255 characters, counted as Unicode code points. */
export function idempotencyKeyProblem(key: string | string[] | undefined): string | undefined {
  if (key === undefined) return 'the idempotency-key header is required';
  if (Array.isArray(key)) return 'send exactly one idempotency-key header';
  // Characters are counted as code points, so an emoji is one character, not two UTF-16 units.
  const length = key.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, '_').length;
  return length >= 1 && length <= 255 ? undefined : 'idempotency-key must be 1 to 255 characters';
}

/**
 * Sign a user or integrator transaction (contract 4.1/4.2). Checked up front: shape (400), duplicate pairs
 * (422), that every param's authority is the subject's own custodial wallet (403), idempotency (409 for a
 * key reused with another payload) and packet size (422). Ledger rules (ownership, listing state, permit,
 * price) are checked only when the transaction lands, as on a real chain.
 */
export function signTransaction(core: SandboxCore, request: SignRequest): SandboxReply {
  if (request.subject.length === 0) return problemReply(400, 'bad_request', 'subject must not be empty');
  const keyProblem = idempotencyKeyProblem(request.idempotencyKey);
  if (keyProblem !== undefined) return problemReply(400, 'bad_request', keyProblem);
  const idempotencyKey = request.idempotencyKey as string;
  const validation = validateInstructionBatch(request.body);
  if (!validation.ok) {
    const error = validation.status === 422 ? 'unprocessable' : 'bad_request';
    return problemReply(validation.status, error, 'invalid instruction batch', validation.problems);
  }
  const batch = validation.batch;
  const kind = request.operation === 'signUser' ? 'user' : 'integrator';
  const signer = core.keys.keypair(kind, request.subject);
  const signerAddress = signer.publicKey.toBase58();
  const foreign = authorityOf(batch, kind).findIndex((address) => address !== signerAddress);
  if (foreign >= 0) {
    return problemReply(
      403,
      'forbidden',
      `params[${foreign}] names a wallet that is not the custodial ${kind} wallet of this subject`,
    );
  }

  const now = core.settle();
  const fingerprint = `${request.operation}|${request.subject}|${batchFingerprint(batch)}`;
  const previous = core.idempotency.lookup(request.apiKeyName, idempotencyKey, fingerprint, now);
  if (previous.kind === 'conflict') {
    return problemReply(
      409,
      'idempotency_key_reused',
      'this idempotency-key was used with a different payload',
    );
  }
  if (previous.kind === 'replay') {
    const record = core.registry.get(previous.entry.transactionId);
    if (record !== undefined) return jsonReply(200, record.body);
  }

  let built;
  try {
    built = buildSignedTransaction({
      batch,
      signer,
      feePayer: core.keys.feePayer,
      programId: core.keys.programId,
      recentBlockhash: core.blockhashes.current(now),
      nonce: core.signings++,
    });
  } catch (error) {
    if (!(error instanceof TransactionTooLargeError)) throw error;
    return problemReply(422, 'transaction_too_large', 'the batch does not fit in one ledger transaction');
  }
  core.registry.add({
    id: built.body.custodialTransactionId,
    transactionSignature: built.transactionSignature,
    wire: Buffer.from(built.body.signedTransaction, 'base64'),
    body: built.body,
    kind,
    subject: request.subject,
    instruction: batch.instruction,
    pairs: batch.params.map((p) => ({ eventId: p.eventId, ticketId: p.ticketId })),
    apiKeyId: request.apiKeyName,
    idempotencyKey,
    signedAtMs: now,
    expiresAtMs: core.blockhashes.expiresAt(built.body.recentBlockhash) ?? now,
    seq: 0,
    state: 'signed',
    updatedAtMs: now,
  });
  core.idempotency.remember(request.apiKeyName, idempotencyKey, {
    operation: request.operation,
    fingerprint,
    transactionId: built.body.custodialTransactionId,
    createdAtMs: now,
  });
  return jsonReply(200, built.body);
}
