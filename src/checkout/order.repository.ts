// One piece: the repository of `orders`, `order_steps` and `order_traces` (DESIGN.md: a repository is the only
// code touching its table). Its hand-written SQL (the prepared create and lock statements, each step's fenced
// conditional UPDATE with its audit row) stays side by side so one table's locking and fencing rules read in one
// place; split by statement, they would spread over files that all share the same row mapping and guards.
import { createHash } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { inlineParams } from '../database/inline-params';
import { isUniqueViolation } from '../database/pg-errors';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { CheckoutConfig } from '../config/checkout.config';
import { PreparedStatements } from '../common/prepared-statements';
import { PG_POOL } from '../database/database.module';
import { DurableWorkService } from '../durable-work/durable-work.service';
import type { LeaseQueue } from '../durable-work/lease-queue';
import { DROP_LEASE, fenced, fromNow, LEASE_COLUMNS, newLease, renewLease } from '../durable-work/lease.sql';
import {
  type AttemptKeys,
  FINAL_ORDER_STATES,
  OrderEntity,
  type OrderState,
  type OrderStep,
  type PreviousAttempt,
  type RecoveryPoint,
} from './order.entity';
import type { AttemptOfKey } from './checkout.context';

export interface NewOrder {
  clientId: string;
  idempotencyKey: string;
  fingerprint: string;
  requestId: string | null;
  buyerSubject: string;
  buyerAddress: string;
  eventId: bigint;
  ticketId: bigint;
  expectedPriceMinor: bigint;
}

export interface BuyerLimits {
  maxOpen: number;
  maxPerEvent: number;
  windowSeconds: number;
}

export type CreateResult =
  | { kind: 'inserted'; order: OrderEntity }
  | { kind: 'existing'; order: OrderEntity }
  // The counts stop at their limit: at or over it, each reads as the limit.
  | { kind: 'open_limit'; open: number }
  | { kind: 'event_limit'; count: number };

/** Columns a step may change (property → column). */
const PATCHABLE = {
  state: 'state',
  recoveryPoint: 'recovery_point',
  attempt: 'attempt',
  batch: 'batch',
  stablecoinDecimals: 'stablecoin_decimals',
  currentPriceMinor: 'current_price_minor',
  upstreamIdempotencyKey: 'upstream_idempotency_key',
  transactionRecordId: 'transaction_record_id',
  custodialTransactionId: 'custodial_transaction_id',
  transactionSignature: 'transaction_signature',
  upstreamStatus: 'upstream_status',
  previousAttempts: 'previous_attempts',
  failureCode: 'failure_code',
  failureReason: 'failure_reason',
} as const;

export type OrderPatch = Partial<{
  state: OrderState;
  recoveryPoint: RecoveryPoint;
  attempt: number;
  batch: Record<string, unknown> | null;
  stablecoinDecimals: number | null;
  currentPriceMinor: bigint | null;
  upstreamIdempotencyKey: string | null;
  transactionRecordId: string | null;
  custodialTransactionId: string | null;
  transactionSignature: string | null;
  upstreamStatus: string | null;
  previousAttempts: PreviousAttempt[];
  failureCode: string | null;
  failureReason: string | null;
}>;

/** One audit row of a commit: its step name and, when it stands for an intermediate state, that state. */
export interface AuditStep {
  step: string;
  state?: OrderState;
  recoveryPoint?: RecoveryPoint;
}

type Row = Record<string, unknown>;
const u64 = (v: unknown): bigint => BigInt(v as string);
const u64OrNull = (v: unknown): bigint | null => (v === null || v === undefined ? null : BigInt(v as string));

function toEntity(row: Row): OrderEntity {
  const o = new OrderEntity();
  o.id = row.id as string;
  o.clientId = row.client_id as string;
  o.idempotencyKey = row.idempotency_key as string;
  o.fingerprint = row.fingerprint as string;
  o.requestId = row.request_id as string | null;
  o.buyerSubject = row.buyer_subject as string;
  o.buyerAddress = row.buyer_address as string;
  o.eventId = u64(row.event_id);
  o.ticketId = u64(row.ticket_id);
  o.expectedPriceMinor = u64(row.expected_price_minor);
  o.currentPriceMinor = u64OrNull(row.current_price_minor);
  o.stablecoinDecimals = row.stablecoin_decimals as number | null;
  o.state = row.state as OrderState;
  o.recoveryPoint = row.recovery_point as RecoveryPoint;
  o.attempt = row.attempt as number;
  o.batch = row.batch as Record<string, unknown> | null;
  o.upstreamIdempotencyKey = row.upstream_idempotency_key as string | null;
  o.transactionRecordId = row.transaction_record_id as string | null;
  o.custodialTransactionId = row.custodial_transaction_id as string | null;
  o.transactionSignature = row.transaction_signature as string | null;
  o.upstreamStatus = row.upstream_status as string | null;
  o.previousAttempts = (row.previous_attempts as PreviousAttempt[] | null) ?? [];
  o.failureCode = row.failure_code as string | null;
  o.failureReason = row.failure_reason as string | null;
  o.stepFailures = row.step_failures as number;
  o.lastError = row.last_error as string | null;
  o.nextAttemptAt = row.next_attempt_at as Date | null;
  o.leaseOwner = row.lease_owner as string | null;
  o.leaseUntil = row.lease_until as Date | null;
  o.leaseToken = (row.lease_token as string | null | undefined) ?? null;
  o.attemptKeys = (row.attempt_keys as AttemptKeys | undefined) ?? 'order_id';
  o.createdAt = row.created_at as Date;
  o.attemptStartedAt = row.attempt_started_at as Date;
  o.finalAt = row.final_at as Date | null;
  o.updatedAt = row.updated_at as Date;
  return o;
}

/** Stamps when the statement that took or renewed the order's lease was sent (OrderEntity.heldSince). */
function held(order: OrderEntity, sentAt: number): OrderEntity {
  order.heldSince = sentAt;
  return order;
}

function sqlValue(key: keyof typeof PATCHABLE, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (key === 'batch' || key === 'previousAttempts') return JSON.stringify(value);
  if (typeof value === 'bigint') return value.toString();
  return value;
}

/** Per pooled connection, which of `orders_lock` (LOCK_SQL) and `orders_create` (CREATE_SQL) it has prepared. */
const PREPARED = new WeakMap<object, Set<string>>();
const FINAL = `('confirmed', 'landed_with_error', 'rejected', 'failed')`;

/** The advisory-lock key of a (client, buyer): the first 8 bytes of a SHA-256, as a signed 64-bit integer. */
export function buyerLockKey(clientId: string, buyerSubject: string): bigint {
  const digest = createHash('sha256').update(`orders:${clientId}\n${buyerSubject}`, 'utf8').digest();
  return digest.readBigInt64BE(0);
}
const LEASE = fromNow;

/**
 * The order insert (after the buyer's lock): the existing order of the key, else the buyer's limit counts, else
 * the new order with its `created` audit row. One row: the order (inserted or existing) and the counts. Each
 * count reads through its own index: the buyer's open orders (orders_buyer_open_idx) and the buyer's orders of
 * this event (orders_buyer_idx), never the buyer's orders of other events; and each stops at its limit ($13,
 * $14), which is all the decision needs (a count at or over its limit reads as the limit).
 * Exported for its integration test, which plans it as production does (prepared, generic plan).
 */
export const CREATE_SQL = `WITH existing AS (SELECT * FROM orders WHERE client_id = $1 AND idempotency_key = $2),
         counts AS (
           SELECT (SELECT count(*) FROM (SELECT FROM orders
                    WHERE client_id = $1 AND buyer_subject = $5 AND state NOT IN ${FINAL}
                    LIMIT $13::int) o)::int AS open,
                  (SELECT count(*) FROM (SELECT FROM orders
                    WHERE client_id = $1 AND buyer_subject = $5 AND event_id = $7::u64
                      AND state NOT IN ('rejected', 'failed', 'landed_with_error')
                      AND created_at > clock_timestamp() - make_interval(secs => $12::float8)
                    LIMIT $14::int) e)::int AS per_event),
         ins AS (
           INSERT INTO orders (client_id, idempotency_key, fingerprint, request_id, buyer_subject, buyer_address,
             event_id, ticket_id, expected_price_minor, state, recovery_point, attempt_keys, ${LEASE_COLUMNS},
             next_attempt_at)
           SELECT $1::uuid, $2::text, $3::text, $4::text, $5::text, $6::text, $7::u64, $8::u64, $9::u64, 'created',
             'revalidate', 'client_key', ${newLease('$10::text', '$11')},
             ${LEASE('$11')}
           FROM counts
           WHERE NOT EXISTS (SELECT 1 FROM existing) AND counts.open < $13::int AND counts.per_event < $14::int
           RETURNING *),
         ev AS (INSERT INTO order_steps (order_id, attempt, step, state, recovery_point, actor, request_id)
                SELECT id, attempt, 'created', state, recovery_point, $10::text, request_id FROM ins)
         SELECT o.*, c.open AS limit_open, c.per_event AS limit_per_event,
                EXISTS (SELECT 1 FROM ins) AS inserted
         FROM counts c LEFT JOIN (SELECT * FROM ins UNION ALL SELECT * FROM existing) o ON true`;

/** The buyer's lock (by its key, $1), unless the client's key ($2, $3) already has its order: a replay takes none. */
const LOCK_SQL = `SELECT pg_advisory_xact_lock($1::bigint)
  WHERE NOT EXISTS (SELECT 1 FROM orders WHERE client_id = $2::uuid AND idempotency_key = $3::text)`;

/** The unique constraint of an order's (client, Idempotency-Key). */
const ORDER_KEY_CONSTRAINT = 'orders_client_id_idempotency_key_key';

/** A unique violation on ORDER_KEY_CONSTRAINT: two first requests with one key raced. */
function isKeyConflict(error: unknown): boolean {
  return isUniqueViolation(error, ORDER_KEY_CONSTRAINT);
}

/**
 * Every write of `orders`, `order_steps` and `order_traces`, and every read of them but the status page's figures
 * (order-figures.repository.ts). Checkout names these tables in SQL only in src/checkout/ (`npm run lint:deps`), but
 * `orders` is also read elsewhere by name passed at run time: the fence check of durable work
 * (DurableWorkService.fencedOff, `Fence{table:'orders'}`), the holds guard of the ledger's fenced writes
 * (ledger-transaction.repository.ts, through `holdsGuard(fence.table)`), and the outbox triggers on `orders`
 * (migrations …-CreateOutboxTriggers). Hand-written SQL: every step is one
 * conditional UPDATE fenced by the claim's token (durable-work/lease.sql.ts) and the expected (state, attempt),
 * with its audit row appended in the same statement, so two drives can never both commit a step (not even two
 * in one process: each claim has its own token) and the audit never disagrees.
 */
@Injectable()
export class OrderRepository {
  /** The per-step statements run as named prepared statements (fixed texts; see PreparedStatements). */
  private readonly prepared: PreparedStatements;
  /** Claims of due orders (the worker) and wake-ups, through the durable-work block. */
  readonly queue: LeaseQueue;

  constructor(
    private readonly dataSource: DataSource,
    work: DurableWorkService,
    config: CheckoutConfig,
    @Inject(PG_POOL) pool: Pool,
  ) {
    this.prepared = new PreparedStatements(pool, 'orders');
    this.queue = work.queue({
      name: 'orders',
      table: 'orders',
      dueFilter: `recovery_point <> 'done'`,
      wakeFilter: `recovery_point <> 'done'`,
      // The recovery worker's claims go round-robin between clients, each capped in the drives it holds: one
      // client's 1,000 queued orders never delay another client's first. Wake-ups of the order's own final
      // transaction are not capped: it continues the client's drive, and the single-order path stays one statement.
      fair: { group: 'client_id', cap: config.CHECKOUT_CLIENT_MAX_IN_FLIGHT },
      fairWake: false,
    });
  }

  private async rows(sql: string, params: unknown[], manager?: EntityManager): Promise<Row[]> {
    if (!manager) return this.prepared.rows<Row>(sql, params);
    const result = await (manager ?? this.dataSource).query<Row[] | [Row[], number]>(sql, params);
    // UPDATE … RETURNING comes back as [rows, count] from the pg driver through TypeORM.
    return Array.isArray(result[0]) ? result[0] : (result as Row[]);
  }

  private async one(sql: string, params: unknown[], manager?: EntityManager): Promise<OrderEntity | null> {
    const [row] = await this.rows(sql, params, manager);
    return row ? toEntity(row) : null;
  }

  /**
   * Inserts the order (state `created`, leased by `owner` so the creating replica drives it first) with its
   * audit row, unless the client already used the key (→ the existing order) or a per-buyer limit is reached.
   * Serialised per (client, buyer) by an advisory lock so concurrent requests cannot overshoot a limit; the
   * lookup of the key, the limit counts and the insert are one statement after the lock (its snapshot is taken
   * after the lock is held, so it sees every order committed before).
   */
  async createOrGet(
    input: NewOrder,
    owner: string,
    leaseMs: number,
    limits: BuyerLimits,
    onSent?: () => void,
  ): Promise<CreateResult> {
    const runner = this.dataSource.createQueryRunner();
    const client = (await runner.connect()) as PoolClient;
    try {
      // One round trip: a multi-statement simple query runs as one transaction, each statement with its own
      // snapshot, so the second one sees every order committed before the lock was granted. Simple queries take
      // no parameters: every value is inlined as a literal (database/inline-params.ts).
      // A replay (the key already has its order) takes no lock: it is answered by the second statement alone.
      // Both statements are prepared on this connection (parsed and planned once, not on every order) and run
      // with EXECUTE in that one query.
      // Each is prepared on its own and noted once it is: a PREPARE is not undone with a failed transaction, so
      // two in one query could leave one prepared and unnoted, and every later attempt would fail on it.
      let prepared = PREPARED.get(client);
      if (!prepared) PREPARED.set(client, (prepared = new Set()));
      for (const [name, sql] of [
        ['orders_lock', LOCK_SQL],
        ['orders_create', CREATE_SQL],
      ] as const) {
        if (prepared.has(name)) continue;
        await client.query(`PREPARE ${name} AS ${sql}`);
        prepared.add(name);
      }
      const sending = client.query(
        `${inlineParams('EXECUTE orders_lock($1, $2, $3)', [
          buyerLockKey(input.clientId, input.buyerSubject).toString(),
          input.clientId,
          input.idempotencyKey,
        ])};
         ${inlineParams(
           'EXECUTE orders_create($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)',
           [
             input.clientId,
             input.idempotencyKey,
             input.fingerprint,
             input.requestId,
             input.buyerSubject,
             input.buyerAddress,
             input.eventId.toString(),
             input.ticketId.toString(),
             input.expectedPriceMinor.toString(),
             owner,
             leaseMs,
             limits.windowSeconds,
             limits.maxOpen,
             limits.maxPerEvent,
           ],
         )}`,
      );
      const sentAt = performance.now();
      // The statement is on the wire: what the caller runs alongside it starts now (the live read).
      onSent?.();
      let results: { rows: Row[] }[];
      try {
        results = (await sending) as unknown as { rows: Row[] }[];
      } catch (error) {
        // Another request with this key (another replica, another buyer: another buyer lock) inserted first; its
        // insert was committed before ours failed on the key's unique constraint, so it is there to read and
        // is answered as it would have been behind the lock: a replay, or 422 for another body.
        if (!isKeyConflict(error)) throw error;
        const winner = await this.findByKey(input.clientId, input.idempotencyKey);
        if (!winner) throw error;
        return { kind: 'existing', order: winner };
      }
      const row = results[1]?.rows[0];
      if (!row) throw new Error('order insert returned nothing');
      if (row.id !== null && row.id !== undefined)
        return {
          kind: row.inserted === true ? 'inserted' : 'existing',
          order: held(toEntity(row), row.inserted === true ? sentAt : 0),
        };
      const open = (row.limit_open as number) ?? 0;
      if (open >= limits.maxOpen) return { kind: 'open_limit', open };
      return { kind: 'event_limit', count: (row.limit_per_event as number) ?? 0 };
    } finally {
      await runner.release();
    }
  }

  /**
   * Commits one step: applies `patch` only if the claim `token` is still current and the order is still at
   * (`expect.state`, `expect.attempt`), renews the lease, resets the step's failure count and appends the audit
   * rows (one per step name, in order; a row may name the state/recovery point it stands for, by default the
   * committed ones). A final state sets `final_at`; `recoveryPoint: 'done'` clears `next_attempt_at` (otherwise
   * it is the lease's end: the worker's fallback if this driver dies). Null: fenced out.
   */
  async commit(
    id: string,
    claim: { owner: string; token: string | null },
    expect: { state: OrderState; attempt: number },
    patch: OrderPatch,
    audit: { steps: AuditStep[]; detail?: string | null; requestId?: string | null },
    leaseMs: number,
  ): Promise<OrderEntity | null> {
    const params: unknown[] = [id, claim.owner, expect.state, expect.attempt, leaseMs];
    params.push(
      audit.steps.map((s) => s.step),
      audit.steps.map((s) => s.state ?? null),
      audit.steps.map((s) => s.recoveryPoint ?? null),
      audit.detail ?? null,
      audit.requestId ?? null,
      claim.token,
    );
    const sets: string[] = [];
    for (const [key, value] of Object.entries(patch) as [keyof typeof PATCHABLE, unknown][]) {
      params.push(sqlValue(key, value));
      const cast = key === 'batch' || key === 'previousAttempts' ? '::jsonb' : '';
      sets.push(`${PATCHABLE[key]} = $${params.length}${cast}`);
    }
    const sentAt = performance.now();
    const committed = await this.one(
      `WITH up AS (
         UPDATE orders SET ${sets.map((s) => `${s}, `).join('')}
           ${renewLease('$5')}, step_failures = 0, last_error = NULL,
           next_attempt_at = ${patch.recoveryPoint === 'done' ? 'NULL' : LEASE('$5')},
           ${patch.state && FINAL_ORDER_STATES.includes(patch.state) ? 'final_at = COALESCE(final_at, clock_timestamp()),' : ''}
           ${patch.attempt !== undefined ? 'attempt_started_at = clock_timestamp(),' : ''}
           updated_at = clock_timestamp()
         WHERE id = $1 AND ${fenced('$11')} AND state = $3 AND attempt = $4
         RETURNING *),
       ev AS (INSERT INTO order_steps (order_id, attempt, step, state, recovery_point, detail, actor, request_id)
              SELECT up.id, up.attempt, s.step, COALESCE(s.state, up.state), COALESCE(s.point, up.recovery_point),
                $9, $2, $10
              FROM up, unnest($6::text[], $7::text[], $8::text[]) WITH ORDINALITY AS s(step, state, point, n)
              ORDER BY s.n)
       SELECT * FROM up`,
      params,
    );
    return committed && held(committed, sentAt);
  }

  /**
   * Gives the order back: due again in `delayMs` (for the worker or a wake-up), lease dropped. `error` counts a
   * failed step (the caller's backoff reads `step_failures`) and is recorded as an audit row.
   */
  async release(
    id: string,
    claim: { owner: string; token: string | null },
    delayMs: number,
    error: string | null,
  ): Promise<boolean> {
    const result = await this.dataSource.query<[unknown[], number] | unknown[]>(
      `WITH up AS (
         UPDATE orders SET ${DROP_LEASE},
           next_attempt_at = CASE WHEN recovery_point = 'done' THEN NULL ELSE ${LEASE('$3')} END,
           step_failures = step_failures + CASE WHEN $4::text IS NULL THEN 0 ELSE 1 END,
           last_error = COALESCE($4, last_error), updated_at = clock_timestamp()
         WHERE id = $1 AND ${fenced('$5')} RETURNING *),
       ev AS (INSERT INTO order_steps (order_id, attempt, step, state, recovery_point, detail, actor)
              SELECT id, attempt, 'retry_scheduled', state, recovery_point, $4, $2 FROM up WHERE $4::text IS NOT NULL)
       SELECT 1 FROM up`,
      [id, claim.owner, delayMs, error === null ? null : error.slice(0, 500), claim.token],
    );
    const released = (Array.isArray(result[0]) ? result[0] : result).length === 1;
    if (released) this.queue.released();
    return released;
  }

  /** Claims up to `limit` due orders whose lease is free or expired (durable work's queue, a new token each). */
  async claimDue(leaseMs: number, limit: number): Promise<OrderEntity[]> {
    const sentAt = performance.now();
    return (await this.queue.claimDue(limit, leaseMs)).map((row) => held(toEntity(row), sentAt));
  }

  /** Claims one order now (a wake-up) if its lease is free or expired (a new token). */
  async claimOne(id: string, leaseMs: number): Promise<OrderEntity | null> {
    const sentAt = performance.now();
    const row = await this.queue.claimOne(id, leaseMs);
    return row ? held(toEntity(row), sentAt) : null;
  }

  /**
   * Stores the traceparent of the POST that created the order (tracing on only; docs/tracing.md). Its own table,
   * not a column of `orders`: a new column would change `SELECT *` / `RETURNING *` of the statements other
   * replicas still have prepared during a rolling deploy ("cached plan must not change result type").
   */
  async saveTraceparent(orderId: string, traceparent: string): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO order_traces (order_id, traceparent) VALUES ($1, $2) ON CONFLICT (order_id) DO NOTHING`,
      [orderId, traceparent],
    );
  }

  /** The traceparent stored for the order, or null (tracing was off when it was created). */
  async traceparentOf(orderId: string): Promise<string | null> {
    const rows = await this.dataSource.query<{ traceparent: string }[]>(
      `SELECT traceparent FROM order_traces WHERE order_id = $1`,
      [orderId],
    );
    return rows[0]?.traceparent ?? null;
  }

  /** Makes an order due now (after its ledger transaction became final); returns whether one was found. */
  async wakeByTransactionRecord(transactionRecordId: string): Promise<string | null> {
    const [row] = await this.rows(
      `UPDATE orders SET next_attempt_at = clock_timestamp()
       WHERE transaction_record_id = $1 AND recovery_point <> 'done' RETURNING id`,
      [transactionRecordId],
    );
    return (row?.id as string | undefined) ?? null;
  }

  /**
   * Reopens an order closed as anything but `confirmed` whose attempt `attempt` has a confirmed ledger
   * transaction (`record`): back to `submitted` at `lookup`, that attempt's key and ids restored, due now, with a
   * `reopened` audit row. The lookup then confirms it by the purchase status. Returns the id when reopened.
   */
  async reopenLanded(
    clientId: string,
    key: AttemptOfKey,
    record: {
      id: string;
      upstreamIdempotencyKey: string;
      custodialTransactionId: string | null;
      feePayerSignature: string | null;
    },
  ): Promise<string | null> {
    const [row] = await this.rows(
      `WITH up AS (
         UPDATE orders SET state = 'submitted', recovery_point = 'lookup', attempt = $2, final_at = NULL,
           failure_code = NULL, failure_reason = NULL, upstream_idempotency_key = $3, transaction_record_id = $4,
           custodial_transaction_id = $5, transaction_signature = $6, upstream_status = 'confirmed',
           step_failures = 0, next_attempt_at = clock_timestamp(), updated_at = clock_timestamp()
         WHERE client_id = $7 AND ${
           'orderId' in key
             ? `id = $1::uuid`
             : // Keys derived from the client's key name its hash; the client's orders are few to hash.
               `encode(sha256(convert_to(idempotency_key, 'UTF8')), 'hex') = $1`
         } AND state IN ('failed', 'rejected', 'landed_with_error') RETURNING *)
       INSERT INTO order_steps (order_id, attempt, step, state, recovery_point, detail, actor)
       SELECT id, attempt, 'reopened', state, recovery_point,
         'a transaction of this attempt landed after the order was closed', 'reconciler'
       FROM up RETURNING order_id AS id`,
      [
        'orderId' in key ? key.orderId : key.clientKeyHash,
        key.attempt,
        record.upstreamIdempotencyKey,
        record.id,
        record.custodialTransactionId,
        record.feePayerSignature,
        clientId,
      ],
      this.dataSource.manager,
    );
    return (row?.id as string | undefined) ?? null;
  }

  findById(id: string): Promise<OrderEntity | null> {
    return this.one(`SELECT * FROM orders WHERE id = $1`, [id]);
  }

  findOwned(clientId: string, id: string): Promise<OrderEntity | null> {
    return this.one(`SELECT * FROM orders WHERE id = $1 AND client_id = $2`, [id, clientId]);
  }

  findByKey(clientId: string, key: string): Promise<OrderEntity | null> {
    return this.one(`SELECT * FROM orders WHERE client_id = $1 AND idempotency_key = $2`, [clientId, key]);
  }

  /** The client's orders, newest first, after the order `afterId` (keyset on created_at, id); `limit + 1` rows. */
  async page(clientId: string, limit: number, afterId: string | null): Promise<OrderEntity[]> {
    const rows = afterId
      ? await this.rows(
          `SELECT o.* FROM orders o, (SELECT created_at, id FROM orders WHERE id = $2 AND client_id = $1) a
           WHERE o.client_id = $1 AND (o.created_at, o.id) < (a.created_at, a.id)
           ORDER BY o.created_at DESC, o.id DESC LIMIT $3`,
          [clientId, afterId, limit + 1],
        )
      : await this.rows(
          `SELECT * FROM orders WHERE client_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
          [clientId, limit + 1],
        );
    return rows.map(toEntity);
  }

  async steps(orderId: string): Promise<OrderStep[]> {
    const rows = await this.rows(
      `SELECT at, attempt, step, state, recovery_point, detail, actor, request_id
       FROM order_steps WHERE order_id = $1 ORDER BY id`,
      [orderId],
    );
    return rows.map((r) => ({
      at: r.at as Date,
      attempt: r.attempt as number,
      step: r.step as string,
      state: r.state as OrderState,
      recoveryPoint: r.recovery_point as RecoveryPoint,
      detail: r.detail as string | null,
      actor: r.actor as string,
      requestId: r.request_id as string | null,
    }));
  }

  /** For metrics: orders by state and the oldest non-final order's age. */
  async gauges(): Promise<{ counts: { state: string; n: number }[]; oldestOpenSeconds: number }> {
    const counts = await this.rows(`SELECT state, count(*)::int AS n FROM orders GROUP BY state`, []);
    const [age] = await this.rows(
      `SELECT COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - min(created_at)
         FILTER (WHERE state NOT IN ${FINAL})), 0)::float8 AS oldest FROM orders`,
      [],
    );
    return {
      counts: counts.map((c) => ({ state: c.state as string, n: c.n as number })),
      oldestOpenSeconds: (age?.oldest as number) ?? 0,
    };
  }
}
