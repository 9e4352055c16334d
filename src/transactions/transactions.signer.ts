import { Injectable, Logger } from '@nestjs/common';
import { requireIdempotencyKey } from '../common/idempotency-key';
import { AppError } from '../common/app-error';
import { validationFailed } from '../common/validation';
import { DEVELOPMENT_IDEMPOTENCY_SECRET, TransactionsConfig } from '../config/transactions.config';
import { DatabaseClock } from '../database/database-clock';
import { DurableWorkService } from '../durable-work/durable-work.service';
import { LeaseLostError } from '../durable-work/lease.sql';
import { UpstreamClient } from '../upstream/upstream.client';
import { UpstreamError } from '../upstream/upstream.error';
import type { SignedTransaction } from '../upstream/upstream.types';
import { deriveUpstreamKey, requestFingerprint, signedTransactionDigest } from './idempotency';
import { canonicalBatchJson, parseInstructionBatch } from './instruction-batch.parser';
import type { LedgerTransactionEntity, WalletKind } from './ledger-transaction.entity';
import { LedgerTransactionRepository } from './ledger-transaction.repository';
import { delayFor } from './transactions.backoff';
import {
  isDefiniteRejection,
  storedSignError,
  TransactionErrors,
  upstreamFailure,
} from './transactions.errors';
import type { SignInput, SignOptions, SignOutcome } from './transactions.types';

/**
 * TransactionsService's signing path: the idempotent `sign` (the record with the key committed before the
 * upstream call) and the signing call itself, which the tracker (TransactionsTrackerWork) repeats for a
 * signing whose outcome is unknown.
 */
@Injectable()
export class TransactionsSigner {
  /** Log lines keep the service's context (`TransactionsService`), as before the split. */
  private readonly logger = new Logger('TransactionsService');
  private readonly secret: string;
  /** This replica's name in leases and history rows (durable work's identity). */
  private readonly instanceId: string;

  constructor(
    private readonly repo: LedgerTransactionRepository,
    private readonly upstream: UpstreamClient,
    private readonly config: TransactionsConfig,
    private readonly work: DurableWorkService,
    private readonly clock: DatabaseClock,
  ) {
    this.instanceId = work.instanceId;
    this.secret = config.TX_IDEMPOTENCY_SECRET ?? DEVELOPMENT_IDEMPOTENCY_SECRET;
  }

  /** The upstream idempotency key for a client's key (deterministic; 48 characters). */
  upstreamKeyFor(clientId: string, idempotencyKey: string): string {
    return deriveUpstreamKey(this.secret, clientId, idempotencyKey);
  }

  /**
   * Signs through the upstream exactly once per (client, key): the record with the key and the request
   * fingerprint is committed first; same key + same body → the stored transaction (`replayed`); different
   * body → 422; in flight → 409 with Retry-After; an earlier call whose outcome is unknown is repeated with
   * the same upstream key (so it returns the same transaction).
   */
  async sign(input: SignInput, { onSigned }: SignOptions = {}): Promise<SignOutcome> {
    requireIdempotencyKey(input.idempotencyKey);
    if (input.subject.length < 1 || input.subject.length > 255)
      throw validationFailed([{ field: 'subject', problems: ['must be 1 to 255 characters'] }]);
    const upstreamIdempotencyKey =
      input.upstreamIdempotencyKey ?? this.upstreamKeyFor(input.clientId, input.idempotencyKey);
    const request = canonicalBatchJson(input.batch);
    const fingerprint = requestFingerprint(input.kind, input.subject, input.batch);
    // The early call sends the batch exactly as a later call would send it from the stored request. No attempt of
    // it starts past the caller's lease deadline (its fence's notAfter).
    const early = input.signAlongsideInsert
      ? this.signUpstream(
          input.kind,
          input.subject,
          JSON.parse(request) as unknown,
          upstreamIdempotencyKey,
          input.requestId,
          input.fence?.notAfter,
        )
      : undefined;
    // Used only once the record is committed and ours; until then (or if it is not) it must not go unhandled.
    early?.catch(() => undefined);
    // The signing request is the longer of the two: it goes on the wire first (its request is built over a few
    // microtasks, and the insert's socket write would otherwise come first and hand the core to PostgreSQL
    // before the signing request leaves; docs/BENCHMARKS.md session 16). The insert follows in the next turn.
    if (early) await new Promise<void>((resolve) => setImmediate(resolve));
    const got = await this.repo.insertOrGet(
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
        orderId: input.orderId ?? null,
      },
      this.instanceId,
      this.config.TX_LEASE_MS,
      this.config.TX_LEASE_MS,
      input.fence,
    );
    // The caller's claim was taken over before anything was bound to the key: the new holder signs, not us.
    if (got.record === null) {
      if (!input.fence) throw new Error('ledger transaction vanished after an idempotency conflict');
      this.work.fencedOff(input.fence, 'sign');
      throw new LeaseLostError(input.fence);
    }
    const { inserted, record } = got;
    if (inserted)
      return {
        record: await this.callSign(record, this.instanceId, input, onSigned, early),
        replayed: false,
      };
    if (record.fingerprint !== fingerprint) throw TransactionErrors.keyReused();
    // A fenced caller (checkout's drive) whose key is already in the ledger goes on only while its claim is
    // current: a stale drive neither replays nor resumes the signing (the new holder does). One read, off the
    // fast path (a first signing inserts the record, fenced in the insert itself).
    if (input.fence && !(await this.work.holds(input.fence, 'sign'))) throw new LeaseLostError(input.fence);
    if (record.phase === 'signed') return { record, replayed: true };
    if (record.phase === 'sign_rejected' && record.signError)
      throw TransactionErrors.replayedRejection(record.signError);
    const claimed = await this.repo.claimSigning(record.id, this.config.TX_LEASE_MS);
    if (!claimed) {
      const fresh = await this.repo.findById(record.id);
      if (fresh?.phase === 'signed') return { record: fresh, replayed: true };
      const now = this.clock.nowMs();
      const waitMs = (fresh?.leaseUntil?.getTime() ?? now) - now;
      throw TransactionErrors.inFlight(Math.max(1, Math.ceil(waitMs / 1000)));
    }
    return { record: await this.callSign(claimed, this.instanceId, input, onSigned), replayed: false };
  }

  /** The upstream signing call for a stored request (the canonical batch, parsed): the same bytes every time. */
  private signUpstream(
    kind: WalletKind,
    subject: string,
    request: unknown,
    upstreamIdempotencyKey: string,
    requestId: string | undefined,
    notAfter: number | undefined,
  ): Promise<SignedTransaction> {
    const parsed = parseInstructionBatch(request, Number.MAX_SAFE_INTEGER);
    if (!parsed.ok) return Promise.reject(new AppError('INTERNAL', 'stored request no longer parses'));
    const options = { requestId, notAfter };
    return kind === 'user'
      ? this.upstream.signUserTransaction(subject, parsed.batch, upstreamIdempotencyKey, options)
      : this.upstream.signIntegratorTransaction(subject, parsed.batch, upstreamIdempotencyKey, options);
  }

  /**
   * Signs a record this replica holds (its lease) and records the outcome. `early`: the same call, already
   * made alongside the record's insert (`signAlongsideInsert`); its answer is recorded as this call's.
   * Called by `sign` and by the tracker (TransactionsTrackerWork.work).
   */
  async callSign(
    record: LedgerTransactionEntity,
    actor: string,
    input: Pick<SignInput, 'requestId' | 'submitNextFollowUpMs' | 'fence'> = {},
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
          input.fence?.notAfter,
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
      // The upstream's own words stay here (with the record's id); tenants get the code and a fixed text.
      this.logger.warn(
        {
          transactionId: record.id,
          requestId: input.requestId,
          upstream: {
            code: error.code,
            status: error.status,
            message: error.message,
            excerpt: error.excerpt,
          },
        },
        'upstream signing failed',
      );
      await this.repo.recordSignFailure(
        record.id,
        actor,
        storedSignError(error),
        rejected,
        delayFor(this.config, record.signAttempts, error),
      );
      throw upstreamFailure(error, 'signing');
    }
  }
}
