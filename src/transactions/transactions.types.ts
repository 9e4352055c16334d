import type {
  InstructionBatch,
  InstructionName,
  SignedTransaction,
  SubmissionResult,
  SubmissionStatus,
} from '../upstream/upstream.types';
import type { Fence } from '../durable-work/lease.sql';
import type { LedgerTransactionEntity, TransactionPhase, WalletKind } from './ledger-transaction.entity';

// The types of TransactionsService's API. Other modules import them from transactions.service.ts, which
// re-exports them; the service's own parts (signer, submitter, tracker work) import them from here.

export interface SignInput {
  /** The calling client (`api_clients.id`): owner of the record and scope of the key. */
  clientId: string;
  /** The caller's Idempotency-Key (1..255 visible ASCII). */
  idempotencyKey: string;
  kind: WalletKind;
  subject: string;
  batch: InstructionBatch;
  requestId?: string;
  /** Upstream idempotency key; default upstreamKeyFor(clientId, idempotencyKey). Checkout passes its own. */
  upstreamIdempotencyKey?: string;
  /** Name of a handler registered with registerFinalHandler, run (at least once) once the status is final. */
  onFinal?: string;
  /**
   * The checkout order this transaction belongs to, stored on the record (`order_id`, LedgerRecord.orderId) for
   * its after-final handler. Absent for every other caller.
   */
  orderId?: string;
  /**
   * The caller submits right after signing (selling, checkout): stored, so that when the tracker resolves
   * an unknown signing after a crash it submits too, and nothing signed for a sale is left unsubmitted.
   */
  submitOnSign?: boolean;
  /**
   * The caller submits right after signing, in process (`send`): the signature and the submission request are
   * recorded in one statement (no separate mark before the submission); the tracker's own first look at the
   * submission is this many ms later.
   */
  submitNextFollowUpMs?: number;
  /**
   * The caller's own claim (checkout: the order's lease token). The record is inserted, and an existing signing
   * resumed, only while that claim is current; otherwise LeaseLostError and nothing is signed or bound to the key.
   */
  fence?: Fence;
  /**
   * The caller committed this request's upstream idempotency key before calling (checkout: the order row, from
   * which the key is derived), so the signing call leaves alongside the insert of the ledger's record instead
   * of after its commit. Nothing else moves: the bytes are sent, and the signature recorded, only once the
   * record is committed; a key already in the ledger drops the early answer and goes the usual way (replay,
   * refusal, or signing again with the stored request). If this process dies before the record commits, the
   * caller's recovery signs again with the same key (the upstream returns the same transaction); nothing was
   * submitted.
   */
  signAlongsideInsert?: boolean;
}

export interface SendOptions {
  requestId?: string;
  /** The caller's claim: a first submission is marked (and sent) only while it is current (LeaseLostError). */
  fence?: Fence;
  /** When the tracker looks next itself (the caller polls until then; if it dies, the tracker carries on). */
  followUpMs?: number;
}

/** A final answer of a submission, as `alongsideFinal` gets it. */
export interface FinalAnswer {
  status: SubmissionStatus;
  failureReason: string | null;
}

/**
 * Everything an in-process caller (checkout) gives the ledger to be called back with: the one seam from
 * transactions/ back into its caller. `finalHandler`/`afterFinal` are registered once (TransactionsService
 * .registerHooks) and run durably, at least once, on any replica that registered them; the others run inside one
 * call (`signAndSend`, `send`) with that call's own state `call` (type C, the caller's), on the calling replica.
 */
export interface LedgerAttemptHooks<C> {
  /** The after-final handler's name: the caller puts it in SignInput.onFinal; `afterFinal` runs under it. */
  readonly finalHandler: string;
  /**
   * Runs once the record's status is final (again after a crash, and while it throws, with backoff): it must be
   * idempotent. Given the record as the tracker left it (LedgerRecord.orderId: the caller's SignInput.orderId).
   */
  afterFinal(record: LedgerRecord): Promise<void>;
  /** signAndSend: a fresh signature is back, right before its bytes are sent (checkout's crash points). */
  signed?(call: C): void;
  /**
   * signAndSend: runs concurrently with recording the first submission's answer, both awaited (the caller's own
   * commit of the signed and submitted transaction): given the record as signed and the answer.
   */
  alongsideAnswer?(call: C, record: LedgerRecord, answer: SubmissionResult): Promise<unknown>;
  /** send: runs concurrently with recording a final answer, both awaited (the caller's own commit of it). */
  alongsideFinal?(call: C, answer: FinalAnswer): Promise<unknown>;
}

/** A caller's hooks bound to one call's own state (what `signAndSend` and `send` take). */
export interface HookedCall<C> {
  hooks: LedgerAttemptHooks<C>;
  call: C;
}

/** `sign`'s options; `signAndSend` is their one user. */
export interface SignOptions {
  /** Called with a fresh signature as soon as the upstream returns it, before it is recorded. */
  onSigned?: (signed: SignedTransaction) => void;
}

export interface SignOutcome {
  record: LedgerTransactionEntity;
  /** True when the key was already used with the same body: the stored transaction, nothing new signed. */
  replayed: boolean;
}

export interface SubmitOutcome {
  record: LedgerTransactionEntity;
  /** The upstream answered this submission (false: outcome unknown, tracked in the background). */
  answered: boolean;
  /** When the upstream's answer arrived (Date.now()), before it was recorded: a poller's next look counts from it. */
  answeredAt?: number;
}

/** A transaction record as other modules see it (read-only; the entity itself stays inside this module). */
export type TransactionRecord = Readonly<LedgerTransactionEntity>;

/**
 * A ledger transaction as an in-process caller driving one (checkout) sees it: read-only, only the fields it
 * reads. What `sign`, `signAndSend`, `send` and `findByIds` give, and `send` takes back (only a record this
 * module returned: `send` refuses any other object).
 */
export interface LedgerRecord {
  readonly id: string;
  readonly clientId: string;
  /** The caller's key (checkout: the attempt's `transactionKey`). */
  readonly idempotencyKey: string;
  readonly upstreamIdempotencyKey: string;
  /** SignInput.orderId; null for other callers and for records written before the column (issue 33). */
  readonly orderId: string | null;
  readonly phase: TransactionPhase;
  readonly status: SubmissionStatus | null;
  readonly failureReason: string | null;
  readonly finalAt: Date | null;
  readonly custodialTransactionId: string | null;
  readonly feePayerSignature: string | null;
}

/** Runs after a transaction's status became final; throwing makes the tracker retry it later. */
export type FinalHandler = (record: LedgerTransactionEntity) => Promise<void>;

/** How the tracker runs an after-final handler, and which records name it (registerFinalHandler). */
export interface FinalHandlerOptions {
  /**
   * Runs before the tracker gives up on this handler for a record (the history's last `on_final` says
   * "gave up after N tries", `lastError` too; the record itself stays as it is). Omitted: retried until it
   * succeeds (checkout's order wake-up: its reconciliation must not be dropped). Retries back off either way.
   */
  maxAttempts?: number;
  /**
   * Instructions whose transactions, signed through the HTTP signing routes, name this handler in `onFinal`
   * (in-process callers pass their own `onFinal`). At most one handler per instruction. How a module that owns
   * a consequence of a ledger change (listings/: the mirror refresh) gets it for every route that signs one,
   * without transactions/ knowing that module.
   */
  instructions?: readonly InstructionName[];
}
