import type { LedgerTransactionEntity, TransactionEvent } from './ledger-transaction.entity';
import { isFinalStatus } from './ledger-transaction.entity';

/** A transaction record as the API shows it (camelCase, like the upstream's signed transaction). */
export interface TransactionResponse {
  custodialTransactionId: string | null;
  kind: string;
  subject: string;
  instruction: string;
  idempotencyKey: string;
  /** `signing` (outcome not known yet), `signed`, `sign_rejected`. */
  phase: string;
  /** The upstream's submission status as last reported; null = not submitted or not known. */
  status: string | null;
  /** True only for confirmed, landed_with_error and expired. `processing` and null are NOT success. */
  final: boolean;
  failureReason: string | null;
  signerAddress: string | null;
  feePayerAddress: string | null;
  signedTransaction: string | null;
  message: string | null;
  signature: string | null;
  feePayerSignature: string | null;
  requiredSigners: string[] | null;
  recentBlockhash: string | null;
  platformInstructions: unknown;
  submitAttempts: number;
  /** Last upstream error of signing or submission (sanitised), null after a success. */
  lastError: string | null;
  /** Why background tracking stopped without a final status: `rejected` (a 4xx), `gave_up`. */
  trackingStopped: string | null;
  createdAt: string;
  signedAt: string | null;
  submittedAt: string | null;
  finalAt: string | null;
  updatedAt: string;
  history?: HistoryEntry[];
}

export interface HistoryEntry {
  at: string;
  type: string;
  phase: string;
  status: string | null;
  failureReason: string | null;
  detail: string | null;
  actor: string;
  startedAt: string | null;
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

export function toTransactionResponse(
  record: LedgerTransactionEntity,
  history?: readonly TransactionEvent[],
): TransactionResponse {
  return {
    custodialTransactionId: record.custodialTransactionId,
    kind: record.kind,
    subject: record.subject,
    instruction: record.instruction,
    idempotencyKey: record.idempotencyKey,
    phase: record.phase,
    status: record.status,
    final: isFinalStatus(record.status),
    failureReason: record.failureReason,
    signerAddress: record.signerAddress,
    feePayerAddress: record.feePayerAddress,
    signedTransaction: record.signedTransaction,
    message: record.message,
    signature: record.signature,
    feePayerSignature: record.feePayerSignature,
    requiredSigners: record.requiredSigners,
    recentBlockhash: record.recentBlockhash,
    platformInstructions: (record.request as { platformInstructions?: unknown }).platformInstructions ?? null,
    submitAttempts: record.submitAttempts,
    lastError: record.lastError,
    trackingStopped: record.trackingStopped,
    createdAt: record.createdAt.toISOString(),
    signedAt: iso(record.signedAt),
    submittedAt: iso(record.submittedAt),
    finalAt: iso(record.finalAt),
    updatedAt: record.updatedAt.toISOString(),
    ...(history
      ? {
          history: history.map((h) => ({
            at: h.at.toISOString(),
            type: h.type,
            phase: h.phase,
            status: h.status,
            failureReason: h.failureReason,
            detail: h.detail,
            actor: h.actor,
            startedAt: iso(h.startedAt),
          })),
        }
      : {}),
  };
}

/** The contract's submission result shape (2.4) for POST /v1/transactions/submissions. */
export function toSubmissionResult(record: LedgerTransactionEntity): Record<string, unknown> {
  return {
    custodialTransactionId: record.custodialTransactionId,
    transactionSignature: record.signature,
    status: record.status,
    ...(record.failureReason ? { failureReason: record.failureReason } : {}),
  };
}
