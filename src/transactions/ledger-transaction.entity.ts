import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { LeaseColumns } from '../durable-work/lease-columns';
import type { InstructionName, SubmissionStatus } from '../upstream/upstream.types';

export type WalletKind = 'user' | 'integrator';
/** `signing`: key committed, signed transaction not (yet) known; `sign_rejected`: upstream refused (4xx). */
export type TransactionPhase = 'signing' | 'signed' | 'sign_rejected';
export type TrackingStopped = 'rejected' | 'gave_up';
export const FINAL_STATUSES: readonly SubmissionStatus[] = ['confirmed', 'landed_with_error', 'expired'];

export function isFinalStatus(status: SubmissionStatus | null): boolean {
  return status !== null && FINAL_STATUSES.includes(status);
}

/** The stored refusal of a signing request, replayed as is for the same key and body. */
export interface StoredSignError {
  code: string;
  status: number | null;
  message: string;
}

/**
 * A ledger transaction signed through this service (table `ledger_transactions`, owned by transactions/). Its lease
 * columns (`lease_owner`, `lease_until`, `lease_token`) are durable work's, declared once in LeaseColumns.
 */
@Entity({ name: 'ledger_transactions' })
export class LedgerTransactionEntity extends LeaseColumns {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'client_id', type: 'uuid' })
  clientId: string;

  @Column({ name: 'idempotency_key', type: 'text' })
  idempotencyKey: string;

  @Column({ name: 'upstream_idempotency_key', type: 'text' })
  upstreamIdempotencyKey: string;

  @Column({ type: 'text' })
  fingerprint: string;

  @Column({ type: 'text' })
  kind: WalletKind;

  @Column({ type: 'text' })
  subject: string;

  @Column({ type: 'text' })
  instruction: InstructionName;

  /** The batch as wire JSON (`{ platformInstructions }`, 64-bit values as strings). */
  @Column({ type: 'jsonb' })
  request: Record<string, unknown>;

  @Column({ name: 'request_id', type: 'text', nullable: true })
  requestId: string | null;

  /** Name of an after-final handler (registered by another module) to run once the status is final. */
  @Column({ name: 'on_final', type: 'text', nullable: true })
  onFinal: string | null;

  /**
   * The checkout order this transaction is an attempt of (SignInput.orderId), for its after-final handler: not a
   * column but a row of `ledger_transaction_orders` (…-CreateLedgerTransactionOrders.ts says why), filled where a
   * statement joins it (the insert, the key lookup) and null otherwise (LedgerTransactionRepository.orderIdOf reads
   * it); null for every other caller and for rows written before that table.
   */
  orderId: string | null = null;

  /** Submit as soon as it is signed, also when the tracker resolves an unknown signing (selling). */
  @Column({ name: 'submit_on_sign', type: 'boolean' })
  submitOnSign: boolean;

  @Column({ type: 'text' })
  phase: TransactionPhase;

  @Column({ name: 'sign_error', type: 'jsonb', nullable: true })
  signError: StoredSignError | null;

  @Column({ name: 'custodial_transaction_id', type: 'text', nullable: true })
  custodialTransactionId: string | null;

  @Column({ name: 'signer_address', type: 'text', nullable: true })
  signerAddress: string | null;

  @Column({ name: 'fee_payer_address', type: 'text', nullable: true })
  feePayerAddress: string | null;

  /** Never logged. */
  @Column({ name: 'signed_transaction', type: 'text', nullable: true })
  signedTransaction: string | null;

  @Column({ name: 'signed_transaction_digest', type: 'text', nullable: true })
  signedTransactionDigest: string | null;

  @Column({ type: 'text', nullable: true })
  message: string | null;

  @Column({ type: 'text', nullable: true })
  signature: string | null;

  @Column({ name: 'fee_payer_signature', type: 'text', nullable: true })
  feePayerSignature: string | null;

  @Column({ name: 'required_signers', type: 'text', array: true, nullable: true })
  requiredSigners: string[] | null;

  @Column({ name: 'recent_blockhash', type: 'text', nullable: true })
  recentBlockhash: string | null;

  @Column({ name: 'additional_signatures', type: 'jsonb', nullable: true })
  additionalSignatures: { address: string; signature: string }[] | null;

  /** The upstream's submission status, unchanged (null: never submitted or the upstream said null). */
  @Column({ type: 'text', nullable: true })
  status: SubmissionStatus | null;

  @Column({ name: 'failure_reason', type: 'text', nullable: true })
  failureReason: string | null;

  @Column({ name: 'sign_attempts', type: 'integer' })
  signAttempts: number;

  @Column({ name: 'submit_attempts', type: 'integer' })
  submitAttempts: number;

  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError: string | null;

  @Column({ name: 'tracking_stopped', type: 'text', nullable: true })
  trackingStopped: TrackingStopped | null;

  @Column({ name: 'on_final_done_at', type: 'timestamptz', nullable: true })
  onFinalDoneAt: Date | null;

  /** Runs of the after-final handler so far (each success or failure counts one). */
  @Column({ name: 'on_final_attempts', type: 'integer' })
  onFinalAttempts: number;

  @Column({ name: 'next_attempt_at', type: 'timestamptz', nullable: true })
  nextAttemptAt: Date | null;

  @Column({ name: 'give_up_at', type: 'timestamptz', nullable: true })
  giveUpAt: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', insert: false })
  createdAt: Date;

  @Column({ name: 'signed_at', type: 'timestamptz', nullable: true })
  signedAt: Date | null;

  @Column({ name: 'submitted_at', type: 'timestamptz', nullable: true })
  submittedAt: Date | null;

  @Column({ name: 'final_at', type: 'timestamptz', nullable: true })
  finalAt: Date | null;

  @Column({ name: 'updated_at', type: 'timestamptz', insert: false })
  updatedAt: Date;
}

/** One append-only history row (table `ledger_transaction_events`). */
export interface TransactionEvent {
  at: Date;
  type: string;
  phase: string;
  status: string | null;
  failureReason: string | null;
  detail: string | null;
  actor: string;
  startedAt: Date | null;
}
