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
 * The claim's UPDATE of the rows CTE `from` picked: it returns `t.*` and `lease_expired_owner`, or, with `select`,
 * that SELECT over those rows as `claimed` (a claim that reads what its work needs from other tables in the same
 * statement, instead of one more query per row).
 */
function claimUpdate(table: LeasedTable, from: string, set: string, select: string | undefined): string {
  const update = `UPDATE ${table} t SET ${takeLease('$1', '$2')}${set ? `, ${set}` : ''}
    FROM ${from} WHERE t.id = ${from}.id
    RETURNING t.*, ${from}.expired_owner AS lease_expired_owner`;
  return select ? `, claimed AS (${update})\n    ${select}` : `\n    ${update}`;
}

/**
 * Claims up to `$limit` due rows of `table`: `FOR UPDATE SKIP LOCKED` (two replicas never claim one row),
 * lease free or expired, `filter` an extra predicate (on the table's own columns). Returns `t.*` and
 * `lease_expired_owner`: the previous holder when the claim took an expired lease over (null when it was free),
 * or `select` over those rows as `claimed` (claimUpdate). Parameters: $1 owner, $2 lease ms, $3 limit, then the
 * filter's. `set` adds SET fragments (on `t`).
 */
export function claimDueSql(table: LeasedTable, filter = 'true', set = '', select?: string): string {
  return `WITH due AS (
      SELECT id, lease_owner AS expired_owner FROM ${table}
      WHERE next_attempt_at <= clock_timestamp() AND ${LEASE_FREE} AND (${filter})
      ORDER BY next_attempt_at LIMIT $3
      FOR UPDATE SKIP LOCKED)${claimUpdate(table, 'due', set, select)}`;
}

/**
 * Fairness of a queue's claims (docs/durable-work.md, "Fair claims"): rows belong to a group (a column of the
 * table: an order's client, a delivery's endpoint), and a group holds at most `cap` rows leased at once, counted on
 * the database across replicas. Groups may nest in owners (a delivery's endpoint belongs to a client): an owner
 * holds at most `ownerCap` rows leased at once over all its groups.
 */
export interface FairShare {
  /** The table's column naming a row's group (uuid, not null); an index on (group, next_attempt_at) WHERE filter. */
  group: string;
  /** Rows one group may hold leased at once (all replicas). */
  cap: number;
  /** SQL of the owner of group value `g` (an expression over `g`), when groups nest; none: groups are owners. */
  ownerOf?: (g: string) => string;
  /** Rows one owner may hold leased at once over all its groups (all replicas). */
  ownerCap?: number;
}

function capOf(n: number, what: string): number {
  if (!Number.isInteger(n) || n < 1) throw new Error(`${what} must be a positive integer (got ${n})`);
  return n;
}

/** Rows of `table` leased now (a partial index on (group) WHERE lease_owner IS NOT NULL keeps this small). */
function heldSql(table: LeasedTable, group: string, filter: string): string {
  return `SELECT ${group} AS g, count(*)::int AS n FROM ${table}
      WHERE lease_owner IS NOT NULL AND lease_until >= clock_timestamp() AND (${filter}) GROUP BY ${group}`;
}

/**
 * claimDueSql shared fairly between groups: the groups with open rows are found by a loose index scan (one probe
 * per group, not per row), each offers its oldest due rows up to its room under `cap` (one index range each), and
 * the claim takes them round-robin: every group's first row before any group's second, oldest first within a
 * round. A few more candidates than `$3` are offered (4 × $3 + 16) and the limit applies after SKIP LOCKED, so
 * replicas claiming at once take disjoint rows instead of colliding on the same few. So a group with 10,000 due rows does not delay another group's first; an owner past `ownerCap` and a
 * group past `cap` are offered nothing. Same parameters and columns as claimDueSql.
 */
export function claimFairSql(
  table: LeasedTable,
  fair: FairShare,
  filter = 'true',
  set = '',
  select?: string,
): string {
  const g = fair.group;
  const cap = capOf(fair.cap, `${table} fair share cap`);
  const ownerCap = fair.ownerOf ? capOf(fair.ownerCap ?? cap, `${table} fair share owner cap`) : null;
  const owner = fair.ownerOf ?? ((x: string) => x);
  return `WITH RECURSIVE groups AS (
      (SELECT ${g} AS g FROM ${table} WHERE (${filter}) ORDER BY ${g} LIMIT 1)
      UNION ALL
      SELECT (SELECT ${g} FROM ${table} WHERE (${filter}) AND ${g} > groups.g ORDER BY ${g} LIMIT 1)
      FROM groups WHERE groups.g IS NOT NULL),
    held AS (${heldSql(table, g, filter)}),
    offered AS (
      SELECT c.cid, c.cat, c.crank, ${owner('groups.g')} AS cowner
      FROM groups CROSS JOIN LATERAL (
        SELECT o.id AS cid, o.next_attempt_at AS cat, row_number() OVER (ORDER BY o.next_attempt_at) AS crank
        FROM (SELECT id, next_attempt_at FROM ${table}
              WHERE ${g} = groups.g AND next_attempt_at <= clock_timestamp() AND ${LEASE_FREE} AND (${filter})
              ORDER BY next_attempt_at
              LIMIT GREATEST(0, ${cap} - COALESCE((SELECT n FROM held WHERE held.g = groups.g), 0))) o) c
      WHERE groups.g IS NOT NULL),
    ranked AS (
      SELECT cid, cat, crank${
        ownerCap === null
          ? ''
          : `,
        row_number() OVER (PARTITION BY cowner ORDER BY crank, cat)
          + COALESCE((SELECT sum(h.n) FROM held h WHERE ${owner('h.g')} = offered.cowner), 0) AS cowner_held`
      }
      FROM offered),
    picked AS (
      SELECT ARRAY(SELECT cid FROM ranked${ownerCap === null ? '' : ` WHERE cowner_held <= ${ownerCap}`}
        ORDER BY crank, cat LIMIT 4 * $3 + 16) AS ids),
    due AS (
      SELECT id, lease_owner AS expired_owner FROM ${table}
      WHERE id = ANY ((SELECT ids FROM picked)::uuid[])
        AND next_attempt_at <= clock_timestamp() AND ${LEASE_FREE} AND (${filter})
      ORDER BY array_position((SELECT ids FROM picked)::uuid[], id) LIMIT $3
      FOR UPDATE SKIP LOCKED)${claimUpdate(table, 'due', set, select)}`;
}

/**
 * The predicate a wake-up's claim adds under a fair share (on the row as `one_t`): its group and its owner have
 * room left under their caps, so a ping or a retry never takes more than a pass would.
 */
export function fairRoomSql(table: LeasedTable, fair: FairShare, filter = 'true'): string {
  const g = fair.group;
  const cap = capOf(fair.cap, `${table} fair share cap`);
  const leased = `h.lease_owner IS NOT NULL AND h.lease_until >= clock_timestamp() AND (${filter})`;
  const group = `(SELECT count(*) FROM ${table} h WHERE h.${g} = one_t.${g} AND ${leased}) < ${cap}`;
  if (!fair.ownerOf) return group;
  const ownerCap = capOf(fair.ownerCap ?? cap, `${table} fair share owner cap`);
  return `${group} AND (SELECT count(*) FROM ${table} h
      WHERE ${fair.ownerOf(`h.${g}`)} = ${fair.ownerOf(`one_t.${g}`)} AND ${leased}) < ${ownerCap}`;
}

/**
 * Claims the row `$3` now (a wake-up) when its lease is free or expired and `filter` holds; same columns as
 * claimDueSql (or `select` over the row as `claimed`). Parameters: $1 owner, $2 lease ms, $3 id, then the
 * filter's. `set` adds SET fragments.
 */
export function claimOneSql(table: LeasedTable, filter = 'true', set = '', select?: string): string {
  return `WITH one AS (
      SELECT id, lease_owner AS expired_owner FROM ${table} one_t
      WHERE id = $3::uuid AND ${LEASE_FREE} AND (${filter})
      FOR UPDATE SKIP LOCKED)${claimUpdate(table, 'one', set, select)}`;
}

/**
 * The two-key advisory lock space of serialised claims (`QueueSpec.serialClaims`): 1685545836 is "dwcl" in ASCII,
 * apart from the migration lock's space and checkout's one-key locks, so no hash collides with them.
 */
export const CLAIM_LOCK_CLASSID = 1685545836;

/** The statement a serialised claim runs first in its transaction: one claimer of queue `name` at a time. */
export function claimLockSql(name: string): string {
  if (!/^[a-z_]+$/.test(name)) throw new Error(`queue name ${name} is not a plain identifier`);
  return `SELECT pg_advisory_xact_lock(${CLAIM_LOCK_CLASSID}, hashtext('${name}'))`;
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
