import { Injectable } from '@nestjs/common';
import { AppError } from '../common/app-error';
import { validationFailed } from '../common/validation';
import { TransactionsConfig } from '../config/transactions.config';
import { DurableWorkService } from '../durable-work/durable-work.service';
import { MetricsService } from '../metrics/metrics.service';
import { UpstreamClient } from '../upstream/upstream.client';
import type { InstructionBatch, InstructionName, SubmissionResult } from '../upstream/upstream.types';
import { signedTransactionDigest } from './idempotency';
import { parseInstructionBatch } from './instruction-batch.parser';
import { LedgerTransactionEntity, type TransactionEvent } from './ledger-transaction.entity';
import { LedgerTransactionRepository } from './ledger-transaction.repository';
import { TransactionErrors } from './transactions.errors';
import { TransactionsMetrics } from './transactions.metrics';
import { TransactionsSigner } from './transactions.signer';
import { TransactionsSubmitter } from './transactions.submitter';
import { TransactionsTrackerWork } from './transactions.tracker-work';
import type {
  FinalHandler,
  FinalHandlerOptions,
  HookedCall,
  LedgerAttemptHooks,
  LedgerRecord,
  SendOptions,
  SignInput,
  SignOptions,
  SignOutcome,
  SubmitOutcome,
} from './transactions.types';

// The API's types live in transactions.types.ts; other modules import them from here.
export type * from './transactions.types';

/** A custodial transaction id as the upstream makes it (64 hex digits); anything else is no record's. */
const CUSTODIAL_ID = /^[0-9a-fA-F]{64}$/;

/**
 * The ledger-transaction lifecycle: sign (idempotent per client key, the key committed before the upstream
 * call), submit, track to a final status (TransactionsTracker), after-final handlers. Used over HTTP by
 * TransactionsController and in-process by selling (listings/) and checkout. See docs/transactions.md.
 * A facade over its parts, each a provider of TransactionsModule: signing (TransactionsSigner), submission
 * (TransactionsSubmitter) and the tracker's work on a row (TransactionsTrackerWork); `signAndSend` joins the
 * first two.
 */
@Injectable()
export class TransactionsService {
  /** Names this replica in leases and history rows (durable work's one identity per process). */
  readonly instanceId: string;

  constructor(
    private readonly repo: LedgerTransactionRepository,
    private readonly signer: TransactionsSigner,
    private readonly submitter: TransactionsSubmitter,
    private readonly trackerWork: TransactionsTrackerWork,
    private readonly upstream: UpstreamClient,
    private readonly config: TransactionsConfig,
    work: DurableWorkService,
    metrics: TransactionsMetrics,
    metricsService: MetricsService,
  ) {
    this.instanceId = work.instanceId;
    metrics.registerGauges(metricsService, () => this.repo.gauges(config.TX_SIGN_RESOLVE_WINDOW_MS));
  }

  /** The upstream idempotency key for a client's key (deterministic; 48 characters). */
  upstreamKeyFor(clientId: string, idempotencyKey: string): string {
    return this.signer.upstreamKeyFor(clientId, idempotencyKey);
  }

  /** Validates a request body `{ platformInstructions }` (400 naming element and field). */
  parseBatch(body: unknown): InstructionBatch {
    const parsed = parseInstructionBatch(body, this.config.TX_MAX_PARAMS);
    if (!parsed.ok) throw validationFailed(parsed.problems);
    return parsed.batch;
  }

  /**
   * Registers an after-final handler by name (call it from onModuleInit, on every replica: only a replica that
   * registered a name claims the records that name it). Records name it in `onFinal` — in-process callers pass it,
   * and the HTTP signing routes record it for the instructions in `options.instructions`. It runs on a replica
   * that registered it once the status is final, again after a crash, and again while it throws (with backoff; at
   * most `options.maxAttempts` runs when set). At least once: it must be idempotent.
   */
  registerFinalHandler(name: string, handler: FinalHandler, options?: FinalHandlerOptions): void {
    this.trackerWork.registerFinalHandler(name, handler, options);
  }

  /**
   * Registers an in-process caller's hooks (checkout's): `afterFinal` as the after-final handler named
   * `finalHandler` (see registerFinalHandler: from onModuleInit, on every replica; at least once). The per-call
   * hooks are given to each `signAndSend` / `send` with that call's state.
   */
  registerHooks(hooks: LedgerAttemptHooks<never>, options?: FinalHandlerOptions): void {
    this.trackerWork.registerFinalHandler(hooks.finalHandler, (record) => hooks.afterFinal(record), options);
  }

  /** The after-final handler the signing routes record for transactions of `instruction` (none: undefined). */
  finalHandlerFor(instruction: InstructionName): string | undefined {
    return this.trackerWork.finalHandlerFor(instruction);
  }

  /**
   * Signs through the upstream exactly once per (client, key): the record with the key and the request
   * fingerprint is committed first; same key + same body → the stored transaction (`replayed`); different
   * body → 422; in flight → 409 with Retry-After; an earlier call whose outcome is unknown is repeated with
   * the same upstream key (so it returns the same transaction).
   */
  sign(input: SignInput, options?: SignOptions): Promise<SignOutcome> {
    return this.signer.sign(input, options);
  }

  /**
   * Signs as `sign` (input with `submitNextFollowUpMs`), then submits: a fresh signature's bytes are sent as soon
   * as the upstream returns them, alongside the statement recording them, not after it. Safe: the row with the
   * key and the request was committed before the signing call; if this process dies before the signature is
   * recorded, signing again with the same upstream key returns the same transaction (contract 4.1 rule 3), and
   * sending the same bytes again is harmless. A replayed or resumed signature is sent as `send` does. Signing
   * errors throw as `sign`'s; the submission's outcome is `sent` (`error` when `send` would have thrown).
   */
  async signAndSend<C>(
    input: SignInput,
    hooked?: HookedCall<C>,
  ): Promise<{
    record: LedgerRecord;
    replayed: boolean;
    sent: { record: LedgerRecord; answered: boolean; answeredAt?: number } | { error: unknown };
  }> {
    const early: { answer?: Promise<SubmissionResult> } = {};
    // A submission the caller makes is marked in the statement recording the signature (the tracker follows it).
    const followUpMs = input.submitNextFollowUpMs ?? this.config.TX_LEASE_MS;
    const outcome = await this.signer.sign(
      { ...input, submitNextFollowUpMs: followUpMs },
      {
        onSigned: (signed) => {
          hooked?.hooks.signed?.(hooked.call);
          early.answer = this.upstream.submitTransaction(
            { signedTransaction: signed.signedTransaction, additionalSignatures: [] },
            // New bytes on the ledger: no attempt past the caller's lease deadline (the new holder re-sends them).
            { requestId: input.requestId, notAfter: input.fence?.notAfter },
          );
          // Awaited below; a failure of the recording statement must not leave it unhandled meanwhile.
          early.answer.catch(() => undefined);
        },
      },
    );
    const alongside =
      hooked?.hooks.alongsideAnswer === undefined
        ? undefined
        : (answer: SubmissionResult) =>
            hooked.hooks.alongsideAnswer?.(hooked.call, outcome.record, answer) ?? Promise.resolve();
    try {
      if (early.answer === undefined)
        return {
          ...outcome,
          sent: await this.submitter.send(outcome.record, {
            requestId: input.requestId,
            fence: input.fence,
            followUpMs,
            alongside,
          }),
        };
      const sent = await this.submitter.sendSubmission(outcome.record, this.instanceId, input.requestId, {
        nextDelayMs: followUpMs,
        alongside,
        answer: early.answer,
      });
      if (sent.record.trackingStopped === 'rejected' && !sent.answered)
        return { ...outcome, sent: { error: TransactionErrors.submissionRefused(sent.record.lastError) } };
      return { ...outcome, sent };
    } catch (error) {
      return { ...outcome, sent: { error } };
    }
  }

  /**
   * The client's transaction made with this idempotency key, with the instruction batch it was asked to sign
   * (`platformInstructions` as stored), or null: how checkout resumes an attempt with its own batch.
   */
  async findByKey(
    clientId: string,
    idempotencyKey: string,
  ): Promise<{ record: LedgerRecord; batch: Record<string, unknown> | null } | null> {
    const record = await this.repo.findByKey(clientId, idempotencyKey);
    if (!record) return null;
    const batch = (record.request as { platformInstructions?: Record<string, unknown> } | null)
      ?.platformInstructions;
    return { record, batch: batch ?? null };
  }

  /** Submits (or re-submits) the same signed bytes of the client's transaction; final ones are not re-sent. */
  async submit(custodialTransactionId: string, clientId: string, requestId?: string): Promise<SubmitOutcome> {
    const { record } = await this.owned(custodialTransactionId, clientId, async (id) => {
      const found = await this.repo.findByCustodialId(id);
      return found && { record: found };
    });
    return this.submitter.submitRecord(record, null, requestId);
  }

  /**
   * Submits, or re-sends, the stored bytes of a record the caller already holds (from `sign` or `findByIds`):
   * for in-process callers that poll for the status (checkout). No re-read. The first submission is marked
   * before it is sent, as `submit` does; a re-send whose answer changes nothing (the same non-final status) is
   * not written; the tracker's own next look is `followUpMs` away (the caller polls until then, and if it dies
   * the tracker carries on). Errors as `submit`: a 4xx → UPSTREAM_REJECTED; otherwise `answered: false`.
   */
  async send<C>(
    record: LedgerRecord,
    options: SendOptions = {},
    hooked?: HookedCall<C>,
  ): Promise<{ record: LedgerRecord; answered: boolean; answeredAt?: number }> {
    // A LedgerRecord is a read-only view of a record this module returned: the object is the entity itself.
    if (!(record instanceof LedgerTransactionEntity))
      throw new Error('send takes a record the transactions module returned');
    return this.submitter.send(record, {
      ...options,
      alongsideFinal:
        hooked?.hooks.alongsideFinal === undefined
          ? undefined
          : (answer) => hooked.hooks.alongsideFinal?.(hooked.call, answer) ?? Promise.resolve(),
    });
  }

  /**
   * `POST /v1/transactions/submissions`: a signed transaction this service signed for the client, with
   * optional additional signatures (the first submission's are kept for re-submissions).
   */
  async submitSigned(
    clientId: string,
    signedTransaction: string,
    additionalSignatures: { address: string; signature: string }[],
    requestId?: string,
  ): Promise<SubmitOutcome> {
    const record = await this.repo.findByDigest(clientId, signedTransactionDigest(signedTransaction));
    if (!record || record.signedTransaction !== signedTransaction)
      throw new AppError('NOT_FOUND', 'No transaction signed through this service matches signedTransaction');
    return this.submitter.submitRecord(record, additionalSignatures, requestId);
  }

  /** The client's transaction and its history (another client's → 404). */
  async get(
    custodialTransactionId: string,
    clientId: string,
  ): Promise<{ record: LedgerTransactionEntity; history: TransactionEvent[] }> {
    return this.owned(custodialTransactionId, clientId, (id) => this.repo.findByCustodialIdWithHistory(id));
  }

  /** Records by internal id (SignOutcome.record.id): how another module polls for a final status. */
  /** The checkout order transaction `id` is an attempt of (SignInput.orderId), or null (none, or written before). */
  orderIdOf(id: string): Promise<string | null> {
    return this.repo.orderIdOf(id);
  }

  findByIds(ids: readonly string[]): Promise<LedgerRecord[]> {
    return this.repo.findByIds(ids);
  }

  history(id: string): Promise<TransactionEvent[]> {
    return this.repo.history(id);
  }

  // ---- internals ---------------------------------------------------------------------------------------

  /**
   * What `find` reads for the client's transaction `custodialTransactionId` (its record, and what else the caller
   * needs in the same statement); a malformed id, no record, or another client's → NOT_FOUND.
   */
  private async owned<T extends { record: LedgerTransactionEntity }>(
    custodialTransactionId: string,
    clientId: string,
    find: (custodialTransactionId: string) => Promise<T | null>,
  ): Promise<T> {
    if (!CUSTODIAL_ID.test(custodialTransactionId)) throw TransactionErrors.notFound();
    const found = await find(custodialTransactionId);
    if (!found || found.record.clientId !== clientId) throw TransactionErrors.notFound();
    return found;
  }
}
