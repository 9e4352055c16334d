import { PublicKey, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import type { FaultPlan } from '../faults/injector';
import type { SandboxCore } from '../sandbox.core';
import { jsonReply, problemReply, type SandboxReply } from '../http/reply';
import { FieldReader } from '../http/request.validation';
import { decodeSignature } from '../chain/wallet.keys';

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

interface SubmissionRequest {
  wire: Buffer;
  additional: { address: string; signature: Buffer }[];
}

function readSubmission(body: unknown): SubmissionRequest | FieldReader {
  const r = new FieldReader([]);
  const root = r.object(body, '$', ['signedTransaction', 'additionalSignatures']);
  if (root === undefined) return r;
  const text = root.signedTransaction;
  if (typeof text !== 'string' || text.length === 0 || !BASE64.test(text)) {
    r.fail('$.signedTransaction', 'must be a non-empty base64 string');
  }
  const additional: SubmissionRequest['additional'] = [];
  // Optional with default [] (contract 2.5), but not nullable: null is a client bug, not "absent".
  const list = Object.hasOwn(root, 'additionalSignatures') ? root.additionalSignatures : [];
  if (!Array.isArray(list)) r.fail('$.additionalSignatures', 'must be an array');
  else {
    list.forEach((item: unknown, i) => {
      const entry = r.object(item, `$.additionalSignatures[${i}]`, ['address', 'signature']);
      if (entry === undefined) return;
      const address = r.address(entry, 'address', `$.additionalSignatures[${i}]`);
      const signature = decodeSignature(entry.signature);
      if (signature === undefined)
        r.fail(`$.additionalSignatures[${i}].signature`, 'must be a base58 signature of 64 bytes');
      else additional.push({ address, signature });
    });
  }
  return r.problems.length > 0 ? r : { wire: Buffer.from(text as string, 'base64'), additional };
}

const rejected = (message: string): SandboxReply => problemReply(400, 'invalid_transaction', message);

/**
 * Submit a signed transaction (contract 4.3). The bytes must decode, carry valid signatures from every
 * required signer (additionalSignatures are applied first) and use a blockhash this sandbox issued; anything
 * else is 400. The first submission starts landing (`processing`); re-submitting the same bytes is idempotent
 * and reports the current status.
 */
export function submitTransaction(core: SandboxCore, body: unknown, plan: FaultPlan): SandboxReply {
  const request = readSubmission(body);
  if (request instanceof FieldReader) {
    return problemReply(400, 'bad_request', 'invalid submission request', request.problems);
  }
  let tx: Transaction;
  try {
    tx = Transaction.from(request.wire);
    const again = tx.serialize({ requireAllSignatures: false, verifySignatures: false });
    if (!again.equals(request.wire)) return rejected('signedTransaction has trailing or non-canonical bytes');
  } catch {
    return rejected('signedTransaction is not a ledger transaction');
  }
  for (const extra of request.additional) {
    if (!tx.signatures.some((s) => s.publicKey.toBase58() === extra.address)) {
      return rejected(`${extra.address} is not a required signer of this transaction`);
    }
    tx.addSignature(new PublicKey(extra.address), extra.signature);
  }
  if (tx.feePayer === undefined || !tx.feePayer.equals(core.keys.feePayer.publicKey)) {
    return rejected('the fee payer is not the sandbox fee payer');
  }
  const missing = tx.signatures.find((s) => s.signature === null);
  if (missing !== undefined) return rejected(`missing signature of ${missing.publicKey.toBase58()}`);
  if (!tx.verifySignatures(true)) return rejected('signature verification failed');
  if (tx.recentBlockhash === undefined || core.blockhashes.expiresAt(tx.recentBlockhash) === undefined) {
    return rejected('blockhash not found');
  }

  const now = core.settle();
  const record = core.registry.findBySignature(bs58.encode(tx.signatures[0].signature as Buffer));
  if (record === undefined) return rejected('transaction was not signed by this sandbox (or before a reset)');
  if (core.registry.stateOf(record, now) === 'signed') {
    const fail = core.landingRng.chance(core.options.landingFailureProbability);
    core.registry.submit(
      record,
      now,
      core.options.landingDelayMs,
      fail ? 'simulated landing failure' : undefined,
    );
  }
  const status = record.state === 'signed' ? 'processing' : record.state;
  return jsonReply(200, {
    custodialTransactionId: record.id,
    transactionSignature: record.transactionSignature,
    status: plan.statusNull ? null : status,
    ...(record.failureReason === undefined ? {} : { failureReason: record.failureReason }),
  });
}
