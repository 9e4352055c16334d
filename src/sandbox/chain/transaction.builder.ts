import { createHash } from 'node:crypto';
import { Transaction, type Keypair, type PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import { encodeBatch, encodeNonce } from './instruction.codec';
import type { InstructionBatch } from './instruction.model';

/** The contract's signed transaction (2.3): exactly these nine fields. */
export interface SignedTransactionBody {
  custodialTransactionId: string;
  signerAddress: string;
  feePayerAddress: string;
  signedTransaction: string;
  message: string;
  signature: string;
  feePayerSignature: string;
  requiredSigners: string[];
  recentBlockhash: string;
}

export interface BuiltTransaction {
  body: SignedTransactionBody;
  /** The ledger's id of the transaction: the first (fee payer) signature, base58. */
  transactionSignature: string;
}

export class TransactionTooLargeError extends Error {}

/**
 * Builds and signs a legacy-message transaction with @solana/web3.js: the fee payer pays, the custodial
 * wallet authorises. `message` is the base64 serialized message that both signatures cover, and the
 * custodial transaction id is its sha256, so it is unique per message (the blockhash makes it unique per
 * signing).
 */
export function buildSignedTransaction(input: {
  batch: InstructionBatch;
  signer: Keypair;
  feePayer: Keypair;
  programId: PublicKey;
  recentBlockhash: string;
  nonce: bigint;
}): BuiltTransaction {
  const tx = new Transaction({ feePayer: input.feePayer.publicKey, recentBlockhash: input.recentBlockhash });
  let wire: Buffer;
  let message: Buffer;
  try {
    tx.add(
      encodeNonce(input.nonce, input.programId),
      ...encodeBatch(input.batch, input.signer.publicKey, input.programId),
    );
    message = tx.serializeMessage();
    tx.sign(input.feePayer, input.signer);
    wire = tx.serialize();
  } catch (error) {
    // web3.js refuses transactions over the 1232-byte packet limit, like the cluster would.
    throw new TransactionTooLargeError(error instanceof Error ? error.message : String(error));
  }
  const signatureOf = (key: PublicKey): string => {
    const entry = tx.signatures.find((s) => s.publicKey.equals(key));
    if (entry?.signature == null) throw new Error('web3.js left a signature empty');
    return bs58.encode(entry.signature);
  };
  const compiled = tx.compileMessage();
  const signerCount = compiled.header.numRequiredSignatures;
  const feePayerSignature = signatureOf(input.feePayer.publicKey);
  return {
    transactionSignature: feePayerSignature,
    body: {
      custodialTransactionId: createHash('sha256').update(message).digest('hex'),
      signerAddress: input.signer.publicKey.toBase58(),
      feePayerAddress: input.feePayer.publicKey.toBase58(),
      signedTransaction: wire.toString('base64'),
      message: message.toString('base64'),
      signature: signatureOf(input.signer.publicKey),
      feePayerSignature,
      requiredSigners: compiled.accountKeys.slice(0, signerCount).map((k) => k.toBase58()),
      recentBlockhash: input.recentBlockhash,
    },
  };
}
