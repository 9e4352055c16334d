// One piece: the repository of `ledger_transactions` and `ledger_transaction_events` (DESIGN.md: a repository is
// the only code touching its table). Every state change is one hand-written conditional UPDATE with its history
// row; they stay side by side so the transitions of one table read together, sharing one row mapping.
import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { DataSource, type EntityManager } from 'typeorm';
import { DurableWorkService } from '../durable-work/durable-work.service';
import type { LeaseQueue } from '../durable-work/lease-queue';
import {
  DROP_LEASE,
  fenced,
  fromNow,
  holdsGuard,
  LEASE_COLUMNS,
  newLease,
  type Fence,
} from '../durable-work/lease.sql';
import { PreparedStatements } from '../common/prepared-statements';
import { PG_POOL } from '../database/database.module';
import type { SignedTransaction, SubmissionResult } from '../upstream/upstream.types';
import {
  LedgerTransactionEntity,
  type StoredSignError,
  type TransactionEvent,
  type WalletKind,
} from './ledger-transaction.entity';

export interface NewLedgerTransaction {
  clientId: string;
  idempotencyKey: string;
  upstreamIdempotencyKey: string;
  fingerprint: string;
  kind: WalletKind;
  subject: string;
  instruction: string;
  request: string;
  requestId: string | null;
  onFinal: string | null;
  submitOnSign: boolean;
  orderId: string | null;
}

type Row = Record<string, unknown>;

const FINAL = `('confirmed', 'landed_with_error', 'expired')`;

/** A `ledger_transaction_events` row (dates already Dates) as the history entry callers see. */
function eventOf(r: Row): TransactionEvent {
  return {
    at: r.at as Date,
    type: r.type as string,
    phase: r.phase as string,
    status: r.status as string | null,
    failureReason: r.failure_reason as string | null,
    detail: r.detail as string | null,
    actor: r.actor as string,
    startedAt: (r.started_at as Date | null) ?? null,
  };
}

/**
 * The only code that reads or writes `ledger_transactions` and `ledger_transaction_events`. Hand-written
 * SQL: every state change is one conditional UPDATE (so concurrent requests and replicas cannot both win)
 * with its history row appended in the same statement.
 */
@Injectable()
export class LedgerTransactionRepository {
  /** Single-row statements run as named prepared statements (fixed texts; see PreparedStatements). */
  private readonly prepared: PreparedStatements;
  /** Claims of due rows (the tracker) and of a signing to resume, through the durable-work block. */
  readonly queue: LeaseQueue;

  constructor(
    private readonly dataSource: DataSource,
    work: DurableWorkService,
    @Inject(PG_POOL) pool: Pool,
  ) {
    this.prepared = new PreparedStatements(pool, 'ledger');
    this.queue = work.queue({
      name: 'ledger_transactions',
      table: 'ledger_transactions',
      // Unknown signings are resolved only while young enough to matter ($4: the window, ms). A pending
      // after-final handler is claimed only by a replica that registered it ($5: this replica's handler names):
      // a replica without it neither burns its tries nor drops it; one that has it runs it.
      dueFilter: `(phase <> 'signing' OR created_at > clock_timestamp() - make_interval(secs => $4::float8 / 1000))
        AND (final_at IS NULL OR on_final IS NULL OR on_final_done_at IS NOT NULL OR on_final = ANY($5::text[]))`,
      wakeFilter: `phase = 'signing'`,
      // The tracker claims a signing row to call the upstream again: that try counts (its backoff grows with it).
      claimSet: `sign_attempts = t.sign_attempts + CASE WHEN t.phase = 'signing' THEN 1 ELSE 0 END`,
    });
  }

  private map(row: Row | undefined): LedgerTransactionEntity | null {
    if (!row) return null;
    const entity = new LedgerTransactionEntity();
    const target = entity as unknown as Record<string, unknown>;
    for (const column of this.dataSource.getMetadata(LedgerTransactionEntity).columns)
      target[column.propertyName] = row[column.databaseName];
    // `ledger_transaction_orders`, where a statement joins it (the insert and the key lookup); else orderIdOf.
    entity.orderId = (row.order_id as string | null | undefined) ?? null;
    return entity;
  }

  private async one(
    sql: string,
    params: unknown[],
    manager?: EntityManager,
  ): Promise<LedgerTransactionEntity | null> {
    if (!manager) return this.map((await this.prepared.rows<Row>(sql, params))[0]);
    const rows = await manager.query<Row[] | [Row[], number]>(sql, params);
    // UPDATE … RETURNING comes back as [rows, count] from the pg driver through TypeORM.
    const list = Array.isArray(rows[0]) ? rows[0] : (rows as Row[]);
    return this.map(list[0]);
  }

  /**
   * Inserts the record (phase `signing`, leased by `owner` for `leaseMs` under a new token, tracker fallback at
   * `retryAfterMs`) and its `created` event, unless the client already used the key; returns which. With a
   * `fence` (the caller's own claim, e.g. the order's), nothing is inserted unless that claim is still current
   * (`fenced: true` when it was not and the key has no record): a stale caller binds nothing to the key.
   */
  insertOrGet(
    input: NewLedgerTransaction,
    owner: string,
    leaseMs: number,
    retryAfterMs: number,
  ): Promise<{ inserted: boolean; record: LedgerTransactionEntity }>;
  insertOrGet(
    input: NewLedgerTransaction,
    owner: string,
    leaseMs: number,
    retryAfterMs: number,
    fence: Fence | undefined,
  ): Promise<
    { inserted: boolean; record: LedgerTransactionEntity } | { inserted: false; record: null; fenced: true }
  >;
  async insertOrGet(
    input: NewLedgerTransaction,
    owner: string,
    leaseMs: number,
    retryAfterMs: number,
    fence?: Fence,
  ): Promise<
    { inserted: boolean; record: LedgerTransactionEntity } | { inserted: false; record: null; fenced: true }
  > {
    const inserted = await this.one(
      `WITH ins AS (
         INSERT INTO ledger_transactions (client_id, idempotency_key, upstream_idempotency_key, fingerprint, kind,
           subject, instruction, request, request_id, on_final, submit_on_sign, phase, sign_attempts,
           ${LEASE_COLUMNS}, next_attempt_at)
         SELECT $1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $14, 'signing', 1, ${newLease('$11', '$12')},
           ${fromNow('$13')}
         WHERE ${fence ? holdsGuard(fence.table, '$16', '$17') : 'true'}
         ON CONFLICT (client_id, idempotency_key) DO NOTHING
         RETURNING *),
       ev AS (INSERT INTO ledger_transaction_events (transaction_id, type, phase, actor)
              SELECT id, 'created', 'signing', $11 FROM ins),
       ord AS (INSERT INTO ledger_transaction_orders (transaction_id, order_id)
               SELECT id, $15::uuid FROM ins WHERE $15::uuid IS NOT NULL)
       SELECT ins.*, $15::uuid AS order_id FROM ins`,
      [
        input.clientId,
        input.idempotencyKey,
        input.upstreamIdempotencyKey,
        input.fingerprint,
        input.kind,
        input.subject,
        input.instruction,
        input.request,
        input.requestId,
        input.onFinal,
        owner,
        leaseMs,
        retryAfterMs,
        input.submitOnSign,
        input.orderId,
        ...(fence ? [fence.id, fence.token] : []),
      ],
    );
    if (inserted) return { inserted: true, record: inserted };
    const existing = await this.one(
      `SELECT t.*, o.order_id FROM ledger_transactions t
       LEFT JOIN ledger_transaction_orders o ON o.transaction_id = t.id
       WHERE t.client_id = $1 AND t.idempotency_key = $2`,
      [input.clientId, input.idempotencyKey],
    );
    if (existing) return { inserted: false, record: existing };
    if (fence) return { inserted: false, record: null, fenced: true };
    throw new Error('ledger transaction vanished after an idempotency conflict');
  }

  /** The checkout order transaction `id` is an attempt of (`ledger_transaction_orders`), or null. */
  async orderIdOf(id: string): Promise<string | null> {
    const rows = await this.prepared.rows<{ order_id: string }>(
      `SELECT order_id FROM ledger_transaction_orders WHERE transaction_id = $1`,
      [id],
    );
    return rows[0]?.order_id ?? null;
  }

  /** Takes over a `signing` record whose lease is free or expired (its first call's outcome is unknown). */
  async claimSigning(id: string, leaseMs: number): Promise<LedgerTransactionEntity | null> {
    const row = await this.queue.claimOne(
      id,
      leaseMs,
      [],
      `sign_attempts = t.sign_attempts + 1, updated_at = clock_timestamp()`,
    );
    return this.map(row ?? undefined);
  }

  /**
   * Records the signed transaction (first writer wins: a retry with the same key got the same one). With
   * `submit` (the caller submits right away) the same statement marks the submission as requested, as
   * markSubmitRequested does: submitted_at, give-up time, the tracker's fallback look, a `submitted` event.
   */
  async recordSigned(
    id: string,
    actor: string,
    signed: SignedTransaction,
    digest: string,
    submit: { giveUpAfterSignMs: number; trackerDelayMs: number } | null = null,
  ): Promise<LedgerTransactionEntity | null> {
    const updated = await this.one(
      `WITH up AS (
         UPDATE ledger_transactions SET phase = 'signed', custodial_transaction_id = $3, signer_address = $4,
           fee_payer_address = $5, signed_transaction = $6, signed_transaction_digest = $7, message = $8,
           signature = $9, fee_payer_signature = $10, required_signers = $11, recent_blockhash = $12,
           signed_at = clock_timestamp(), ${DROP_LEASE},
           next_attempt_at = CASE WHEN $13::boolean
             THEN clock_timestamp() + make_interval(secs => $15::float8 / 1000) END,
           submitted_at = CASE WHEN $13::boolean THEN clock_timestamp() END,
           give_up_at = CASE WHEN $13::boolean
             THEN clock_timestamp() + make_interval(secs => $14::float8 / 1000) END,
           last_error = NULL, updated_at = clock_timestamp()
         WHERE id = $1 AND phase = 'signing' RETURNING *),
       ev AS (INSERT INTO ledger_transaction_events (transaction_id, type, phase, actor)
              SELECT up.id, e.type, 'signed', $2 FROM up, (VALUES (1, 'signed'), (2, 'submitted')) AS e (n, type)
              WHERE e.n = 1 OR $13::boolean ORDER BY e.n)
       SELECT * FROM up`,
      [
        id,
        actor,
        signed.custodialTransactionId,
        signed.signerAddress,
        signed.feePayerAddress,
        signed.signedTransaction,
        digest,
        signed.message,
        signed.signature,
        signed.feePayerSignature,
        signed.requiredSigners,
        signed.recentBlockhash,
        submit !== null,
        submit?.giveUpAfterSignMs ?? 0,
        submit?.trackerDelayMs ?? 0,
      ],
    );
    return updated ?? this.findById(id);
  }

  /**
   * A failed signing call. `rejected`: the upstream refused it (definite 4xx) → `sign_rejected`, replayed
   * to later retries. Otherwise the outcome is unknown: the lease is released and the tracker (or the
   * caller's retry) calls again with the same key after `retryAfterMs`.
   */
  recordSignFailure(
    id: string,
    actor: string,
    error: StoredSignError,
    rejected: boolean,
    retryAfterMs: number,
  ): Promise<LedgerTransactionEntity | null> {
    return this.one(
      `WITH up AS (
         UPDATE ledger_transactions SET
           phase = CASE WHEN $3 THEN 'sign_rejected' ELSE phase END,
           sign_error = CASE WHEN $3 THEN $4::jsonb ELSE NULL END,
           last_error = $5, ${DROP_LEASE},
           next_attempt_at = CASE WHEN $3 THEN NULL
             ELSE clock_timestamp() + make_interval(secs => $6::float8 / 1000) END,
           updated_at = clock_timestamp()
         WHERE id = $1 AND phase = 'signing' RETURNING *),
       ev AS (INSERT INTO ledger_transaction_events (transaction_id, type, phase, detail, actor)
              SELECT id, CASE WHEN $3 THEN 'sign_rejected' ELSE 'sign_failed' END, phase, $5, $2 FROM up)
       SELECT * FROM up`,
      [
        id,
        actor,
        rejected,
        JSON.stringify(error),
        `${error.code}: ${error.message}`.slice(0, 500),
        retryAfterMs,
      ],
    );
  }

  /**
   * Marks a signed record as submitted (first time: submitted_at, give-up time, additional signatures)
   * and clears a stopped tracking (an explicit submit is not a blind retry).
   */
  markSubmitRequested(
    id: string,
    actor: string,
    giveUpAfterSignMs: number,
    additional: { address: string; signature: string }[] | null,
    trackerDelayMs: number,
    fence?: Fence,
  ): Promise<LedgerTransactionEntity | null> {
    return this.one(
      `WITH up AS (
         UPDATE ledger_transactions SET
           submitted_at = COALESCE(submitted_at, clock_timestamp()),
           give_up_at = COALESCE(give_up_at, signed_at + make_interval(secs => $3::float8 / 1000)),
           additional_signatures = COALESCE(additional_signatures, $4::jsonb),
           tracking_stopped = NULL,
           next_attempt_at = CASE WHEN final_at IS NULL
             THEN clock_timestamp() + make_interval(secs => $5::float8 / 1000) ELSE next_attempt_at END,
           updated_at = clock_timestamp()
         WHERE id = $1 AND phase = 'signed' AND ${fence ? holdsGuard(fence.table, '$6', '$7') : 'true'}
         RETURNING *),
       ev AS (INSERT INTO ledger_transaction_events (transaction_id, type, phase, status, actor)
              SELECT id, 'submitted', phase, status, $2 FROM up)
       SELECT * FROM up`,
      [
        id,
        actor,
        giveUpAfterSignMs,
        additional === null ? null : JSON.stringify(additional),
        trackerDelayMs,
        ...(fence ? [fence.id, fence.token] : []),
      ],
    );
  }

  /**
   * Records one submission answer. A final status is never overwritten (a late `processing` cannot undo
   * `confirmed`); a status change appends a `status` event. `nextDelayMs` schedules the next re-submission
   * (ignored once final; then the after-final handler, if any, is due at once).
   */
  recordSubmission(
    id: string,
    actor: string,
    result: SubmissionResult,
    nextDelayMs: number,
  ): Promise<LedgerTransactionEntity | null> {
    return this.one(
      `WITH cur AS (SELECT id, status AS old_status FROM ledger_transactions WHERE id = $1 FOR UPDATE),
       up AS (
         UPDATE ledger_transactions t SET
           submit_attempts = submit_attempts + 1,
           status = CASE WHEN t.status IN ${FINAL} THEN t.status ELSE $3 END,
           failure_reason = CASE WHEN t.status IN ${FINAL} THEN t.failure_reason ELSE $4 END,
           final_at = CASE WHEN t.status IN ${FINAL} THEN t.final_at
                           WHEN $3 IN ${FINAL} THEN clock_timestamp() ELSE NULL END,
           last_error = NULL,
           next_attempt_at = CASE
             WHEN (t.status IN ${FINAL} OR $3 IN ${FINAL}) THEN
               CASE WHEN t.on_final IS NOT NULL AND t.on_final_done_at IS NULL THEN clock_timestamp() ELSE NULL END
             WHEN t.tracking_stopped IS NOT NULL THEN NULL
             ELSE clock_timestamp() + make_interval(secs => $5::float8 / 1000) END,
           updated_at = clock_timestamp()
         FROM cur WHERE t.id = cur.id RETURNING t.*, cur.old_status),
       ev AS (INSERT INTO ledger_transaction_events (transaction_id, type, phase, status, failure_reason, actor)
              SELECT id, 'status', phase, status, failure_reason, $2 FROM up
              WHERE status IS DISTINCT FROM old_status)
       SELECT * FROM up`,
      [id, actor, result.status, result.failureReason ?? null, nextDelayMs],
    );
  }

  /**
   * A failed submission. `rejected` (a 4xx): recorded, tracking stops and the record shows why. Otherwise
   * (timeout, 5xx, 429, network) the status stays as it was and the next attempt is scheduled.
   */
  recordSubmitError(
    id: string,
    actor: string,
    detail: string,
    rejected: boolean,
    nextDelayMs: number,
  ): Promise<LedgerTransactionEntity | null> {
    return this.one(
      `WITH up AS (
         UPDATE ledger_transactions SET submit_attempts = submit_attempts + 1, last_error = $3,
           tracking_stopped = CASE WHEN $4 AND final_at IS NULL THEN 'rejected' ELSE tracking_stopped END,
           next_attempt_at = CASE WHEN final_at IS NOT NULL THEN next_attempt_at WHEN $4 THEN NULL
             ELSE clock_timestamp() + make_interval(secs => $5::float8 / 1000) END,
           updated_at = clock_timestamp()
         WHERE id = $1 RETURNING *),
       ev AS (INSERT INTO ledger_transaction_events (transaction_id, type, phase, status, detail, actor)
              SELECT id, CASE WHEN $4 THEN 'submit_rejected' ELSE 'submit_failed' END, phase, status, $3, $2 FROM up)
       SELECT * FROM up`,
      [id, actor, detail.slice(0, 500), rejected, nextDelayMs],
    );
  }

  /** Stops tracking a transaction still not final once its give-up time has passed (else no-op). */
  recordGaveUp(id: string, actor: string): Promise<LedgerTransactionEntity | null> {
    return this.one(
      `WITH up AS (
         UPDATE ledger_transactions SET tracking_stopped = 'gave_up', next_attempt_at = NULL,
           updated_at = clock_timestamp()
         WHERE id = $1 AND final_at IS NULL AND tracking_stopped IS NULL
           AND give_up_at IS NOT NULL AND give_up_at <= clock_timestamp() RETURNING *),
       ev AS (INSERT INTO ledger_transaction_events (transaction_id, type, phase, status, actor)
              SELECT id, 'gave_up', phase, status, $2 FROM up)
       SELECT * FROM up`,
      [id, actor],
    );
  }

  /**
   * One run of the after-final handler: done (`error` null), failed and due again in `retryDelayMs`, or failed
   * and given up (`retryDelayMs` null: nothing more is scheduled; the history and last_error say so). Each run
   * counts in on_final_attempts.
   */
  recordOnFinal(
    id: string,
    actor: string,
    error: string | null,
    retryDelayMs: number | null,
  ): Promise<unknown> {
    return this.dataSource.query(
      `WITH up AS (
         UPDATE ledger_transactions SET
           on_final_attempts = on_final_attempts + 1,
           on_final_done_at = CASE WHEN $3::text IS NULL THEN clock_timestamp() ELSE NULL END,
           next_attempt_at = CASE WHEN $3::text IS NULL OR $4::float8 IS NULL THEN NULL
             ELSE clock_timestamp() + make_interval(secs => $4::float8 / 1000) END,
           last_error = CASE WHEN $3::text IS NOT NULL AND $4::float8 IS NULL
             THEN left('after-final handler gave up after ' || (on_final_attempts + 1) || ' tries: ' || $3, 500)
             ELSE $3 END,
           updated_at = clock_timestamp()
         WHERE id = $1 RETURNING *)
       INSERT INTO ledger_transaction_events (transaction_id, type, phase, status, detail, actor)
       SELECT id, 'on_final', phase, status, COALESCE(CASE WHEN $4::float8 IS NULL THEN last_error END, $3, 'done'), $2
       FROM up`,
      [id, actor, error, retryDelayMs],
    );
  }

  /**
   * Claims up to `limit` due rows through durable work's queue (a lease and a new token each), so each row is worked
   * by one replica at a time: unknown signings younger than `signWindowMs`, submitted non-final
   * transactions and pending after-final handlers named in `finalHandlers` (the ones this replica registered).
   */
  async claimDue(
    leaseMs: number,
    limit: number,
    signWindowMs: number,
    finalHandlers: readonly string[] = [],
  ): Promise<LedgerTransactionEntity[]> {
    const rows = await this.queue.claimDue(limit, leaseMs, [signWindowMs, finalHandlers]);
    return rows.map((row) => this.map(row) as LedgerTransactionEntity);
  }

  /**
   * Appends the tracker's attempt (who, from when to now) and releases its lease if its claim (`token`) is
   * still current; false when it was not (the row was claimed again: this attempt's work was fenced off).
   */
  async release(
    id: string,
    token: string | null,
    actor: string,
    startedAt: Date,
    detail: string,
  ): Promise<boolean> {
    const rows = await this.dataSource.query<[unknown[], number] | unknown[]>(
      `WITH up AS (
         UPDATE ledger_transactions SET ${DROP_LEASE}
         WHERE id = $1 AND ${fenced('$2')} RETURNING id, phase, status)
       INSERT INTO ledger_transaction_events (transaction_id, type, phase, status, detail, actor, started_at)
       SELECT id, 'attempt', phase, status, $5, $3, $4 FROM up RETURNING 1`,
      [id, token, actor, startedAt, detail],
    );
    const released = (Array.isArray(rows[0]) ? rows[0] : rows).length === 1;
    if (released) this.queue.released();
    return released;
  }

  findById(id: string): Promise<LedgerTransactionEntity | null> {
    return this.one(`SELECT * FROM ledger_transactions WHERE id = $1`, [id]);
  }

  /** The client's transaction made with this idempotency key (unique per client), if any. */
  findByKey(clientId: string, idempotencyKey: string): Promise<LedgerTransactionEntity | null> {
    return this.one(`SELECT * FROM ledger_transactions WHERE client_id = $1 AND idempotency_key = $2`, [
      clientId,
      idempotencyKey,
    ]);
  }

  findByCustodialId(custodialTransactionId: string): Promise<LedgerTransactionEntity | null> {
    return this.one(`SELECT * FROM ledger_transactions WHERE custodial_transaction_id = $1`, [
      custodialTransactionId.toLowerCase(),
    ]);
  }

  /**
   * The record and its history as of one snapshot (one statement): a reader never sees a history row whose record
   * change it does not see (recordOnFinal writes both in one statement; two reads could straddle it).
   */
  async findByCustodialIdWithHistory(
    custodialTransactionId: string,
  ): Promise<{ record: LedgerTransactionEntity; history: TransactionEvent[] } | null> {
    const rows = await this.dataSource.query<Row[]>(
      `SELECT t.*, h.history FROM ledger_transactions t
       CROSS JOIN LATERAL (
         SELECT COALESCE(json_agg(json_build_object('at', e.at, 'type', e.type, 'phase', e.phase, 'status', e.status,
                  'failure_reason', e.failure_reason, 'detail', e.detail, 'actor', e.actor,
                  'started_at', e.started_at) ORDER BY e.id), '[]'::json) AS history
         FROM ledger_transaction_events e WHERE e.transaction_id = t.id) h
       WHERE t.custodial_transaction_id = $1`,
      [custodialTransactionId.toLowerCase()],
    );
    const row = rows[0];
    if (!row) return null;
    const history = (row.history as Row[]).map((r) =>
      eventOf({
        ...r,
        at: new Date(r.at as string),
        started_at: r.started_at && new Date(r.started_at as string),
      }),
    );
    return { record: this.map(row) as LedgerTransactionEntity, history };
  }

  findByDigest(clientId: string, digest: string): Promise<LedgerTransactionEntity | null> {
    return this.one(
      `SELECT * FROM ledger_transactions WHERE client_id = $1 AND signed_transaction_digest = $2 LIMIT 1`,
      [clientId, digest],
    );
  }

  async findByIds(ids: readonly string[]): Promise<LedgerTransactionEntity[]> {
    if (ids.length === 0) return [];
    const rows = await this.dataSource.query<Row[]>(
      `SELECT * FROM ledger_transactions WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    return rows.map((row) => this.map(row) as LedgerTransactionEntity);
  }

  async history(id: string): Promise<TransactionEvent[]> {
    const rows = await this.dataSource.query<Row[]>(
      `SELECT at, type, phase, status, failure_reason, detail, actor, started_at
       FROM ledger_transaction_events WHERE transaction_id = $1 ORDER BY id`,
      [id],
    );
    return rows.map(eventOf);
  }

  /** For metrics: counts by kind/instruction/status (phase when unsigned), and the oldest non-final age. */
  async gauges(signWindowMs: number): Promise<{
    counts: { kind: string; instruction: string; status: string; n: number }[];
    oldestOpenSeconds: number;
    trackerLagSeconds: number;
  }> {
    const counts = await this.dataSource.query<
      { kind: string; instruction: string; status: string; n: number }[]
    >(
      `SELECT kind, instruction,
         COALESCE(status, CASE WHEN phase = 'signed' AND submitted_at IS NULL THEN 'signed'
                               WHEN phase = 'signed' THEN 'unknown' ELSE phase END) AS status,
         count(*)::int AS n
       FROM ledger_transactions GROUP BY 1, 2, 3`,
    );
    const [ages] = await this.dataSource.query<{ oldest: number; lag: number }[]>(
      `SELECT
         COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - min(created_at) FILTER (
           WHERE final_at IS NULL AND tracking_stopped IS NULL
             AND (phase = 'signing' OR submitted_at IS NOT NULL))), 0)::float8 AS oldest,
         COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - min(next_attempt_at) FILTER (
           WHERE next_attempt_at < clock_timestamp()
             AND (phase <> 'signing' OR created_at > clock_timestamp() - make_interval(secs => $1::float8 / 1000)))),
           0)::float8 AS lag
       FROM ledger_transactions`,
      [signWindowMs],
    );
    return { counts, oldestOpenSeconds: ages.oldest, trackerLagSeconds: ages.lag };
  }
}
