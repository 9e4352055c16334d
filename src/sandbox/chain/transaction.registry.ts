import type { InstructionName } from './instruction.model';
import type { SignedTransactionBody } from './transaction.builder';
import type { WalletKind } from './wallet.keys';

export type SubmissionStatus = 'processing' | 'confirmed' | 'landed_with_error' | 'expired';
/** `signed` = signed but never submitted; the rest are the contract's submission statuses. */
export type TransactionState = 'signed' | SubmissionStatus;

export interface TransactionRecord {
  readonly id: string;
  readonly transactionSignature: string;
  readonly wire: Buffer;
  readonly body: SignedTransactionBody;
  readonly kind: WalletKind;
  readonly subject: string;
  readonly instruction: InstructionName;
  readonly pairs: readonly { eventId: bigint; ticketId: bigint }[];
  readonly apiKeyId: string;
  readonly idempotencyKey: string;
  readonly signedAtMs: number;
  /** When the recent blockhash ages out; an unlanded transaction is `expired` from then on. */
  readonly expiresAtMs: number;
  seq: number;
  state: TransactionState;
  submittedAtMs?: number;
  landAtMs?: number;
  /** Set at submission when the landing-failure probability fires. */
  forcedFailure?: string;
  failureReason?: string;
  updatedAtMs: number;
}

/**
 * All signed transactions and the lazy landing queue. Nothing runs on a timer: every request first calls
 * settle(now), which lands or expires due transactions in time order. The outcome is therefore a pure
 * function of the clock and the request sequence, and close() has no timers to clean up.
 */
export class TransactionRegistry {
  private readonly byId = new Map<string, TransactionRecord>();
  private readonly bySignature = new Map<string, TransactionRecord>();
  private pending: TransactionRecord[] = [];
  private nextSeq = 0;

  /** `execute` runs a landing transaction against the ledger at a time; returns a failure reason or undefined. */
  constructor(private readonly execute: (record: TransactionRecord, atMs: number) => string | undefined) {}

  add(record: TransactionRecord): void {
    record.seq = this.nextSeq++;
    this.byId.set(record.id, record);
    this.bySignature.set(record.transactionSignature, record);
  }

  get(id: string): TransactionRecord | undefined {
    return this.byId.get(id);
  }

  findBySignature(signature: string): TransactionRecord | undefined {
    return this.bySignature.get(signature);
  }

  get size(): number {
    return this.byId.size;
  }

  /** First submission: starts landing, or marks it expired when the blockhash already aged out. */
  submit(record: TransactionRecord, nowMs: number, landingDelayMs: number, forcedFailure?: string): void {
    if (record.state !== 'signed') return;
    record.submittedAtMs = nowMs;
    record.updatedAtMs = nowMs;
    if (nowMs >= record.expiresAtMs) {
      record.state = 'expired';
      return;
    }
    record.state = 'processing';
    record.landAtMs = nowMs + landingDelayMs;
    record.forcedFailure = forcedFailure;
    this.pending.push(record);
  }

  /** The state a record has at `nowMs`, expiring never-submitted transactions whose blockhash aged out. */
  stateOf(record: TransactionRecord, nowMs: number): TransactionState {
    if (record.state === 'signed' && nowMs >= record.expiresAtMs) {
      record.state = 'expired';
      record.updatedAtMs = record.expiresAtMs;
    }
    return record.state;
  }

  settle(nowMs: number): void {
    if (this.pending.length === 0) return;
    const due = this.pending.filter((r) => dueAt(r) <= nowMs);
    if (due.length === 0) return;
    this.pending = this.pending.filter((r) => dueAt(r) > nowMs);
    due.sort((a, b) => dueAt(a) - dueAt(b) || a.seq - b.seq);
    for (const record of due) {
      const at = dueAt(record);
      record.updatedAtMs = at;
      if (at >= record.expiresAtMs) {
        record.state = 'expired';
        continue;
      }
      const failure = record.forcedFailure ?? this.execute(record, at);
      record.state = failure === undefined ? 'confirmed' : 'landed_with_error';
      record.failureReason = failure;
    }
  }
}

/** A processing transaction lands at landAt, unless its blockhash expires first. */
function dueAt(record: TransactionRecord): number {
  return Math.min(record.landAtMs ?? Infinity, record.expiresAtMs);
}
