import { requireIdempotencyKey } from '../common/idempotency-key';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppError } from '../common/app-error';
import { validationFailed } from '../common/validation';
import { DEVELOPMENT_IDEMPOTENCY_SECRET, TransactionsConfig } from '../config/transactions.config';
import { MetricsService } from '../metrics/metrics.service';
import { UpstreamClient } from '../upstream/upstream.client';
import { UpstreamError } from '../upstream/upstream.error';
import type {
  InstructionBatch,
  SignedTransaction,
  SubmissionResult,
  SubmissionStatus,
} from '../upstream/upstream.types';
import { deriveUpstreamKey, requestFingerprint, signedTransactionDigest } from './idempotency';
import { canonicalBatchJson, parseInstructionBatch } from './instruction-batch.parser';
import {
  isFinalStatus,
  type LedgerTransactionEntity,
  type TransactionEvent,
  type WalletKind,
} from './ledger-transaction.entity';
import { LedgerTransactionRepository } from './ledger-transaction.repository';
import {
  isDefiniteRejection,
  storedSignError,
  TransactionErrors,
  upstreamFailure,
} from './transactions.errors';
import { TransactionsMetrics } from './transactions.metrics';

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
}

export interface SendOptions {
  requestId?: string;
  /** When the tracker looks next itself (the caller polls until then; if it dies, the tracker carries on). */
  followUpMs?: number;
  /** Runs concurrently with recording a final answer, both awaited (the caller's own commit of it). */
  alongsideFinal?: (answer: { status: SubmissionStatus; failureReason: string | null }) => Promise<unknown>;
}

export interface SignAndSendOptions extends SendOptions {
  /** Called once a fresh signature is back, right before its bytes are sent (checkout's crash points). */
  onSigned?: () => void;
  /**
   * Runs concurrently with recording the first submission's answer, both awaited (the caller's own commit of
   * the signed and submitted transaction): given the record as signed and the answer.
   */
  alongsideAnswer?: (record: LedgerTransactionEntity, answer: SubmissionResult) => Promise<unknown>;
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

/** `sign`'s options; `signAndSend` is their one user. */
export interface SignOptions {
  /** Called with a fresh signature as soon as the upstream returns it, before it is recorded. */
  onSigned?: (signed: SignedTransaction) => void;
  /** As SignAndSendOptions.signAlongsideInsert. */
  signAlongsideInsert?: boolean;
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

/** Runs after a transaction's status became final; throwing makes the tracker retry it later. */
/** A transaction record as other modules see it (read-only; the entity itself stays inside this module). */
export type TransactionRecord = Readonly<LedgerTransactionEntity>;

export type FinalHandler = (record: LedgerTransactionEntity) => Promise<void>;

/**
 * The ledger-transaction lifecycle: sign (idempotent per client key, the key committed before the upstream
 * call), submit, track to a final status (TransactionsTracker), after-final handlers. Used over HTTP by
 * TransactionsController and in-process by selling (listings/) and checkout. See docs/transactions.md.
 */
@Injectable()
export class TransactionsService {
  /** Names this replica in leases and history rows. */
  readonly instanceId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly logger = new Logger(TransactionsService.name);
  private readonly repo: LedgerTransactionRepository;
  private readonly handlers = new Map<string, FinalHandler>();
  private readonly secret: string;

  constructor(
    dataSource: DataSource,
    private readonly upstream: UpstreamClient,
    private readonly config: TransactionsConfig,
    private readonly metrics: TransactionsMetrics,
    metricsService: MetricsService,
  ) {
    this.repo = new LedgerTransactionRepository(dataSource);
    this.secret = config.TX_IDEMPOTENCY_SECRET ?? DEVELOPMENT_IDEMPOTENCY_SECRET;
    metrics.registerGauges(metricsService, () => this.repo.gauges(config.TX_SIGN_RESOLVE_WINDOW_MS));
  }

  /** The upstream idempotency key for a client's key (deterministic; 48 characters). */
  upstreamKeyFor(clientId: string, idempotencyKey: string): string {
    return deriveUpstreamKey(this.secret, clientId, idempotencyKey);
  }

  /** Validates a request body `{ platformInstructions }` (400 naming element and field). */
  parseBatch(body: unknown): InstructionBatch {
    const parsed = parseInstructionBatch(body, this.config.TX_MAX_PARAMS);
    if (!parsed.ok) throw validationFailed(parsed.problems);
    return parsed.batch;
  }

  /**
   * Registers an after-final handler by name (call it from onModuleInit). Records name it in `onFinal`;
   * the handler runs on whichever replica sees the final status, and again after a crash until it succeeds.
   */
  registerFinalHandler(name: string, handler: FinalHandler): void {
    this.handlers.set(name, handler);
  }

  /**
   * Signs through the upstream exactly once per (client, key): the record with the key and the request
   * fingerprint is committed first; same key + same body → the stored transaction (`replayed`); different
   * body → 422; in flight → 409 with Retry-After; an earlier call whose outcome is unknown is repeated with
   * the same upstream key (so it returns the same transaction).
   */
  async sign(
    input: SignInput,
    { onSigned, signAlongsideInsert = false }: SignOptions = {},
  ): Promise<SignOutcome> {
    requireIdempotencyKey(input.idempotencyKey);
    if (input.subject.length < 1 || input.subject.length > 255)
      throw validationFailed([{ field: 'subject', problems: ['must be 1 to 255 characters'] }]);
    const upstreamIdempotencyKey =
      input.upstreamIdempotencyKey ?? this.upstreamKeyFor(input.clientId, input.idempotencyKey);
    const request = canonicalBatchJson(input.batch);
    const fingerprint = requestFingerprint(input.kind, input.subject, input.batch);
    // The early call sends the batch exactly as a later call would send it from the stored request.
    const early = signAlongsideInsert
      ? this.signUpstream(
          input.kind,
          input.subject,
          JSON.parse(request) as unknown,
          upstreamIdempotencyKey,
          input.requestId,
        )
      : undefined;
    // Used only once the record is committed and ours; until then (or if it is not) it must not go unhandled.
    early?.catch(() => undefined);
    const { inserted, record } = await this.repo.insertOrGet(
      {
        clientId: input.clientId,
        idempotencyKey: input.idempotencyKey,
        upstreamIdempotencyKey,
        fingerprint,
        kind: input.kind,
        subject: input.subject,
        instruction: input.batch.instruction,
        request,
        requestId: input.requestId ?? null,
        onFinal: input.onFinal ?? null,
        submitOnSign: input.submitOnSign ?? false,
      },
      this.instanceId,
      this.config.TX_LEASE_MS,
      this.config.TX_LEASE_MS,
    );
    if (inserted)
      return {
        record: await this.callSign(record, this.instanceId, input, onSigned, early),
        replayed: false,
      };
    if (record.fingerprint !== fingerprint) throw TransactionErrors.keyReused();
    if (record.phase === 'signed') return { record, replayed: true };
    if (record.phase === 'sign_rejected' && record.signError)
      throw TransactionErrors.replayedRejection(record.signError);
    const claimed = await this.repo.claimSigning(record.id, this.instanceId, this.config.TX_LEASE_MS);
    if (!claimed) {
      const fresh = await this.repo.findById(record.id);
      if (fresh?.phase === 'signed') return { record: fresh, replayed: true };
      const waitMs = (fresh?.leaseUntil?.getTime() ?? Date.now()) - Date.now();
      throw TransactionErrors.inFlight(Math.max(1, Math.ceil(waitMs / 1000)));
    }
    return { record: await this.callSign(claimed, this.instanceId, input, onSigned), replayed: false };
  }

  /**
   * Signs as `sign` (input with `submitNextFollowUpMs`), then submits: a fresh signature's bytes are sent as soon
   * as the upstream returns them, alongside the statement recording them, not after it. Safe: the row with the
   * key and the request was committed before the signing call; if this process dies before the signature is
   * recorded, signing again with the same upstream key returns the same transaction (contract 4.1 rule 3), and
   * sending the same bytes again is harmless. A replayed or resumed signature is sent as `send` does. Signing
   * errors throw as `sign`'s; the submission's outcome is `sent` (`error` when `send` would have thrown).
   */
  async signAndSend(
    input: SignInput,
    options: SignAndSendOptions = {},
  ): Promise<SignOutcome & { sent: SubmitOutcome | { error: unknown } }> {
    const early: { answer?: Promise<SubmissionResult> } = {};
    // A submission the caller makes is marked in the statement recording the signature (the tracker follows it).
    const signing = {
      ...input,
      submitNextFollowUpMs: input.submitNextFollowUpMs ?? options.followUpMs ?? this.config.TX_LEASE_MS,
    };
    const outcome = await this.sign(signing, {
      onSigned: (signed) => {
        options.onSigned?.();
        early.answer = this.upstream.submitTransaction(
          { signedTransaction: signed.signedTransaction, additionalSignatures: [] },
          { requestId: options.requestId },
        );
        // Awaited below; a failure of the recording statement must not leave it unhandled meanwhile.
        early.answer.catch(() => undefined);
      },
      signAlongsideInsert: options.signAlongsideInsert,
    });
    const along = options.alongsideAnswer;
    const alongside = along && ((answer: SubmissionResult) => along(outcome.record, answer));
    try {
      if (early.answer === undefined)
        return { ...outcome, sent: await this.send(outcome.record, { ...options, alongside }) };
      const sent = await this.sendSubmission(outcome.record, this.instanceId, options.requestId, {
        nextDelayMs: options.followUpMs ?? this.config.TX_LEASE_MS,
        alongsideFinal: options.alongsideFinal,
        alongside,
        answer: early.answer,
      });
      if (sent.record.trackingStopped === 'rejected' && !sent.answered) {
        const refused = `The upstream refused the submission: ${sent.record.lastError}`;
        return { ...outcome, sent: { error: new AppError('UPSTREAM_REJECTED', refused) } };
      }
      return { ...outcome, sent };
    } catch (error) {
      return { ...outcome, sent: { error } };
    }
  }

  /** The client's transaction made with this idempotency key, if any (checkout resumes an attempt with it). */
  findByKey(clientId: string, idempotencyKey: string): Promise<LedgerTransactionEntity | null> {
    return this.repo.findByKey(clientId, idempotencyKey);
  }

  /** Submits (or re-submits) the same signed bytes of the client's transaction; final ones are not re-sent. */
  async submit(custodialTransactionId: string, clientId: string, requestId?: string): Promise<SubmitOutcome> {
    const record = await this.owned(custodialTransactionId, clientId);
    return this.submitRecord(record, null, requestId);
  }

  /**
   * Submits, or re-sends, the stored bytes of a record the caller already holds (from `sign` or `findByIds`):
   * for in-process callers that poll for the status (checkout). No re-read. The first submission is marked
   * before it is sent, as `submit` does; a re-send whose answer changes nothing (the same non-final status) is
   * not written; the tracker's own next look is `followUpMs` away (the caller polls until then, and if it dies
   * the tracker carries on). Errors as `submit`: a 4xx → UPSTREAM_REJECTED; otherwise `answered: false`.
   */
  async send(
    record: LedgerTransactionEntity,
    options: SendOptions & { alongside?: (answer: SubmissionResult) => Promise<unknown> } = {},
  ): Promise<SubmitOutcome> {
    if (record.phase !== 'signed') throw TransactionErrors.notSigned();
    if (record.finalAt) return { record, answered: true };
    const followUpMs = options.followUpMs ?? this.config.TX_LEASE_MS;
    let current = record;
    if (!current.submittedAt || current.trackingStopped) {
      const marked = await this.repo.markSubmitRequested(
        current.id,
        this.instanceId,
        this.config.TX_BLOCKHASH_LIFETIME_MS + this.config.TX_GIVE_UP_GRACE_MS,
        null,
        followUpMs,
      );
      if (!marked) throw TransactionErrors.notSigned();
      current = marked;
    }
    const outcome = await this.sendSubmission(current, this.instanceId, options.requestId, {
      nextDelayMs: followUpMs,
      skipUnchanged: current.submitAttempts > 0,
      alongsideFinal: options.alongsideFinal,
      alongside: options.alongside,
    });
    if (outcome.record.trackingStopped === 'rejected' && !outcome.answered)
      throw new AppError(
        'UPSTREAM_REJECTED',
        `The upstream refused the submission: ${outcome.record.lastError}`,
      );
    return outcome;
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
    return this.submitRecord(record, additionalSignatures, requestId);
  }

  /** The client's transaction and its history (another client's → 404). */
  async get(
    custodialTransactionId: string,
    clientId: string,
  ): Promise<{ record: LedgerTransactionEntity; history: TransactionEvent[] }> {
    const record = await this.owned(custodialTransactionId, clientId);
    return { record, history: await this.repo.history(record.id) };
  }

  /** Records by internal id (SignOutcome.record.id): how another module polls for a final status. */
  findByIds(ids: readonly string[]): Promise<LedgerTransactionEntity[]> {
    return this.repo.findByIds(ids);
  }

  history(id: string): Promise<TransactionEvent[]> {
    return this.repo.history(id);
  }

  // ---- used by TransactionsTracker -------------------------------------------------------------------

  claimDue(): Promise<LedgerTransactionEntity[]> {
    return this.repo.claimDue(
      this.instanceId,
      this.config.TX_LEASE_MS,
      this.config.TX_TRACKER_BATCH,
      this.config.TX_SIGN_RESOLVE_WINDOW_MS,
    );
  }

  /** One background attempt on a claimed row; always releases the lease and logs the attempt. */
  async work(record: LedgerTransactionEntity): Promise<void> {
    const startedAt = new Date();
    const actor = this.instanceId;
    let work = 'none';
    let result = 'ok';
    try {
      if (record.phase === 'signing') {
        work = 'sign';
        const signed = await this.callSign(record, actor).catch((error: unknown) => {
          result = error instanceof AppError ? error.code : 'error';
          return null;
        });
        if (signed?.submitOnSign) {
          work = 'sign+submit';
          const outcome = await this.submitRecord(signed, null);
          result = outcome.record.status ?? 'unknown';
        }
      } else if (record.finalAt) {
        work = 'on_final';
        result = await this.runFinalHandler(record, actor);
      } else if (record.phase === 'signed' && !record.trackingStopped) {
        work = 'submit';
        const { record: after, answered } = await this.sendSubmission(record, actor);
        result = answered ? (after.status ?? 'null') : (after.lastError ?? 'error').split(':')[0];
        if (after.finalAt && after.onFinal && !after.onFinalDoneAt) await this.runFinalHandler(after, actor);
        else if (!after.finalAt && !after.trackingStopped) await this.repo.recordGaveUp(record.id, actor);
      }
    } catch (error) {
      result = 'error';
      this.logger.warn({ err: error, transactionId: record.id }, 'tracker attempt failed');
    } finally {
      this.metrics.attempts.inc({ work, result });
      await this.repo.release(record.id, actor, startedAt, `${work}: ${result}`);
    }
  }

  // ---- internals ---------------------------------------------------------------------------------------

  private async owned(custodialTransactionId: string, clientId: string): Promise<LedgerTransactionEntity> {
    if (!/^[0-9a-fA-F]{64}$/.test(custodialTransactionId)) throw TransactionErrors.notFound();
    const record = await this.repo.findByCustodialId(custodialTransactionId);
    if (!record || record.clientId !== clientId) throw TransactionErrors.notFound();
    return record;
  }

  private delayFor(attempt: number): number {
    const { TX_RESUBMIT_BASE_DELAY_MS: base, TX_RESUBMIT_MAX_DELAY_MS: max } = this.config;
    return Math.min(max, base * 2 ** Math.min(20, Math.max(0, attempt - 1)));
  }

  /** The upstream signing call for a stored request (the canonical batch, parsed): the same bytes every time. */
  private signUpstream(
    kind: WalletKind,
    subject: string,
    request: unknown,
    upstreamIdempotencyKey: string,
    requestId: string | undefined,
  ): Promise<SignedTransaction> {
    const parsed = parseInstructionBatch(request, Number.MAX_SAFE_INTEGER);
    if (!parsed.ok) return Promise.reject(new AppError('INTERNAL', 'stored request no longer parses'));
    const options = { requestId };
    return kind === 'user'
      ? this.upstream.signUserTransaction(subject, parsed.batch, upstreamIdempotencyKey, options)
      : this.upstream.signIntegratorTransaction(subject, parsed.batch, upstreamIdempotencyKey, options);
  }

  /**
   * Signs a record this replica holds (its lease) and records the outcome. `early`: the same call, already
   * made alongside the record's insert (`signAlongsideInsert`); its answer is recorded as this call's.
   */
  private async callSign(
    record: LedgerTransactionEntity,
    actor: string,
    input: Pick<SignInput, 'requestId' | 'submitNextFollowUpMs'> = {},
    onSigned?: (signed: SignedTransaction) => void,
    early?: Promise<SignedTransaction>,
  ): Promise<LedgerTransactionEntity> {
    try {
      const signed = await (early ??
        this.signUpstream(
          record.kind,
          record.subject,
          record.request,
          record.upstreamIdempotencyKey,
          input.requestId,
        ));
      onSigned?.(signed);
      const submit =
        input.submitNextFollowUpMs === undefined
          ? null
          : {
              giveUpAfterSignMs: this.config.TX_BLOCKHASH_LIFETIME_MS + this.config.TX_GIVE_UP_GRACE_MS,
              trackerDelayMs: input.submitNextFollowUpMs,
            };
      const updated = await this.repo.recordSigned(
        record.id,
        actor,
        signed,
        signedTransactionDigest(signed.signedTransaction),
        submit,
      );
      if (!updated) throw new AppError('INTERNAL', 'ledger transaction vanished');
      return updated;
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      const rejected = isDefiniteRejection(error);
      await this.repo.recordSignFailure(
        record.id,
        actor,
        storedSignError(error),
        rejected,
        this.delayFor(record.signAttempts),
      );
      throw upstreamFailure(error, 'signing');
    }
  }

  private async submitRecord(
    record: LedgerTransactionEntity,
    additional: { address: string; signature: string }[] | null,
    requestId?: string,
  ): Promise<SubmitOutcome> {
    if (record.phase !== 'signed') throw TransactionErrors.notSigned();
    if (record.finalAt) return { record, answered: true };
    const marked = await this.repo.markSubmitRequested(
      record.id,
      this.instanceId,
      this.config.TX_BLOCKHASH_LIFETIME_MS + this.config.TX_GIVE_UP_GRACE_MS,
      additional,
      this.config.TX_LEASE_MS,
    );
    if (!marked) throw TransactionErrors.notSigned();
    const outcome = await this.sendSubmission(marked, this.instanceId, requestId);
    if (outcome.record.trackingStopped === 'rejected' && !outcome.answered)
      throw new AppError(
        'UPSTREAM_REJECTED',
        `The upstream refused the submission: ${outcome.record.lastError}`,
      );
    return outcome;
  }

  /** Sends the stored bytes once and records the answer (a 4xx stops tracking; other failures reschedule). */
  private async sendSubmission(
    record: LedgerTransactionEntity,
    actor: string,
    requestId?: string,
    options: Pick<SendOptions, 'alongsideFinal'> & {
      nextDelayMs?: number;
      skipUnchanged?: boolean;
      /** The upstream call for these bytes, already sent (signAndSend): only its answer is recorded here. */
      answer?: Promise<SubmissionResult>;
      /** Runs concurrently with recording an answer (any status), both awaited. */
      alongside?: (answer: SubmissionResult) => Promise<unknown>;
    } = {},
  ): Promise<SubmitOutcome> {
    const nextDelay = options.nextDelayMs ?? this.delayFor(record.submitAttempts + 1);
    try {
      const result = await (options.answer ??
        this.upstream.submitTransaction(
          {
            signedTransaction: record.signedTransaction ?? '',
            additionalSignatures: record.additionalSignatures ?? [],
          },
          { requestId },
        ));
      const answeredAt = Date.now();
      // A poll that learnt nothing new (same non-final status, nothing to clear) leaves the row as it is.
      if (
        options.skipUnchanged &&
        result.status === record.status &&
        !isFinalStatus(result.status) &&
        (result.failureReason ?? null) === (record.failureReason ?? null) &&
        record.lastError === null
      )
        return { record, answered: true, answeredAt };
      const final = result.status !== null && isFinalStatus(result.status) ? result.status : null;
      // The caller's own commit is started first: it is what its customer waits for (checkout's order turns
      // final in it), and each statement sent costs the sender a wake-up of the database on a busy machine.
      const [, , updated] = await Promise.all([
        final && options.alongsideFinal?.({ status: final, failureReason: result.failureReason ?? null }),
        options.alongside?.(result),
        this.repo.recordSubmission(record.id, actor, result, nextDelay),
      ]);
      if (!updated) throw new AppError('INTERNAL', 'ledger transaction vanished');
      if (updated.finalAt && !record.finalAt) {
        this.metrics.observeFinal(updated);
        this.logger.log(
          { transactionId: updated.custodialTransactionId, status: updated.status, requestId },
          'ledger transaction final',
        );
      }
      return { record: updated, answered: true, answeredAt };
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      const rejected = isDefiniteRejection(error);
      const detail = `${error.code}${error.status ? ` ${error.status}` : ''}: ${error.excerpt ?? error.message}`;
      const delay = Math.max(nextDelay, error.retryAfterMs ?? 0);
      const updated = await this.repo.recordSubmitError(record.id, actor, detail, rejected, delay);
      return { record: updated ?? record, answered: false };
    }
  }

  private async runFinalHandler(record: LedgerTransactionEntity, actor: string): Promise<string> {
    const name = record.onFinal;
    if (!name || record.onFinalDoneAt) return 'none';
    const handler = this.handlers.get(name);
    let error: string | null = null;
    if (!handler) error = `no handler named ${name} on this replica`;
    else {
      try {
        await handler(record);
      } catch (e) {
        error = e instanceof Error ? e.message.slice(0, 300) : 'handler failed';
      }
    }
    await this.repo.recordOnFinal(record.id, actor, error, this.delayFor(2));
    return error === null ? 'done' : 'failed';
  }
}
