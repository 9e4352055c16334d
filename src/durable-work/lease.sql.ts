/**
 * The lease columns every leased table has (orders, ledger_transactions, webhook_deliveries): `lease_owner` (who: WorkIdentity),
 * `lease_until` (database clock), `lease_token` (the fencing token: a fresh value of `durable_work_token_seq` on
 * every claim, so it increases per claim across every table and every replica), and `next_attempt_at` (when
 * the row is due). These fragments are the only lease SQL in the service; repositories compose them into their
 * own statements, which keep their domain columns (the rows stay the source of truth).
 */

/** Names the sequence every claim draws its fencing token from (migration CreateDurableWorkTokenSeq). */
export const TOKEN_SEQUENCE = 'durable_work_token_seq';

/** A time `ms` (SQL expression: a parameter like `$3`) from now, on the database clock. */
export function fromNow(ms: string): string {
  return `clock_timestamp() + make_interval(secs => ${ms}::float8 / 1000)`;
}

/** The row's lease is free: never taken, handed back, or expired (database clock, so replicas agree). */
export const LEASE_FREE = `(lease_until IS NULL OR lease_until < clock_timestamp())`;

/** SET fragment of a claim: `owner` holds the row for `ms`, under a new fencing token. */
export function takeLease(owner: string, ms: string): string {
  return `lease_owner = ${owner}, lease_until = ${fromNow(ms)}, lease_token = nextval('${TOKEN_SEQUENCE}')`;
}

/** The lease columns of a row inserted already held (the creating replica drives it first). */
export const LEASE_COLUMNS = `lease_owner, lease_until, lease_token`;

/** The values for LEASE_COLUMNS: `owner` holds the new row for `ms` under a new token. */
export function newLease(owner: string, ms: string): string {
  return `${owner}, ${fromNow(ms)}, nextval('${TOKEN_SEQUENCE}')`;
}

/** SET fragment of a holder's renewal (a committed step): the lease runs `ms` from now again. */
export function renewLease(ms: string): string {
  return `lease_until = ${fromNow(ms)}`;
}

/** SET fragment of a hand-back: the lease dropped (the token stays: a stale holder's writes still miss). */
export const DROP_LEASE = `lease_owner = NULL, lease_until = NULL`;

/** WHERE fragment of every write by a lease holder: only while the claim that gave it `token` is current. */
export function fenced(token: string): string {
  return `lease_token = ${token}::bigint`;
}

/**
 * A guard another table's write carries (`WHERE EXISTS (…)`): the row `id` of `table` is still held with `token`.
 * FOR SHARE: a claim of that row waits until the guarded write commits, so a takeover always sees it.
 */
export function holdsGuard(table: LeasedTable, id: string, token: string): string {
  return `EXISTS (SELECT 1 FROM ${table} WHERE id = ${id}::uuid AND ${fenced(token)} FOR SHARE)`;
}

/** A holder's claim of a leased row: what a write by another module carries to stay fenced by it. */
export interface Fence {
  table: LeasedTable;
  id: string;
  token: string;
  /**
   * This process's `performance.now()` past which the claim may have been taken over (`leaseDeadline`, from when
   * the claim was taken or last renewed): an upstream call that can move money made under this fence starts no
   * attempt after it (UpstreamCallOptions.notAfter). Absent: the claim's statements are the only guard.
   */
  notAfter?: number;
}

/** Tables whose rows are leased through this block. */
export type LeasedTable = 'orders' | 'ledger_transactions' | 'webhook_deliveries';

/**
 * Claims up to `$limit` due rows of `table`: `FOR UPDATE SKIP LOCKED` (two replicas never claim one row),
 * lease free or expired, `filter` an extra predicate (on the table's own columns). Returns `t.*` and
 * `lease_expired_owner`: the previous holder when the claim took an expired lease over (null when it was free).
 * Parameters: $1 owner, $2 lease ms, $3 limit, then the filter's. `set` adds SET fragments (on `t`).
 */
export function claimDueSql(table: LeasedTable, filter = 'true', set = ''): string {
  return `WITH due AS (
      SELECT id, lease_owner AS expired_owner FROM ${table}
      WHERE next_attempt_at <= clock_timestamp() AND ${LEASE_FREE} AND (${filter})
      ORDER BY next_attempt_at LIMIT $3
      FOR UPDATE SKIP LOCKED)
    UPDATE ${table} t SET ${takeLease('$1', '$2')}${set ? `, ${set}` : ''}
    FROM due WHERE t.id = due.id
    RETURNING t.*, due.expired_owner AS lease_expired_owner`;
}

/**
 * Claims the row `$3` now (a wake-up) when its lease is free or expired and `filter` holds; same columns as
 * claimDueSql. Parameters: $1 owner, $2 lease ms, $3 id, then the filter's. `set` adds SET fragments.
 */
export function claimOneSql(table: LeasedTable, filter = 'true', set = ''): string {
  return `WITH one AS (
      SELECT id, lease_owner AS expired_owner FROM ${table}
      WHERE id = $3::uuid AND ${LEASE_FREE} AND (${filter})
      FOR UPDATE SKIP LOCKED)
    UPDATE ${table} t SET ${takeLease('$1', '$2')}${set ? `, ${set}` : ''}
    FROM one WHERE t.id = one.id
    RETURNING t.*, one.expired_owner AS lease_expired_owner`;
}

/** The age of the oldest due row whose lease is free (seconds; 0 when none): how far behind the workers are. */
export function oldestDueAgeSql(table: LeasedTable, filter = 'true'): string {
  return `SELECT COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - min(next_attempt_at)), 0)::float8 AS age
    FROM ${table} WHERE next_attempt_at <= clock_timestamp() AND ${LEASE_FREE} AND (${filter})`;
}

/**
 * Thrown by a write or call carrying a `Fence` whose claim is no longer current: the holder lost its lease (the
 * row was claimed again) and must stop; the new holder does the work. Never reaches an HTTP caller.
 */
export class LeaseLostError extends Error {
  readonly code = 'LEASE_LOST';
  constructor(readonly fence: Fence) {
    super(`lease lost: ${fence.table} ${fence.id} was claimed again`);
    this.name = 'LeaseLostError';
  }
}
