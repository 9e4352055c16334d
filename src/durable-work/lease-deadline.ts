/**
 * The margin kept before a lease's end: a call that can move money must reach the upstream while the caller's
 * claim is provably current, and between this process's last look at its clock and the request arriving
 * upstream there is the send itself and any drift between this process's monotonic clock and the database's.
 * A tenth of the lease, at most a second (30 s leases: 1 s; test leases of 3 s: 300 ms).
 */
export const LEASE_DEADLINE_MARGIN_MAX_MS = 1_000;

/**
 * This process's `performance.now()` past which a lease taken or renewed by a statement sent at `heldSince` (its
 * `performance.now()` just before sending) may have been taken over: `heldSince + leaseMs − margin`. The database
 * stamped `lease_until = clock_timestamp() + leaseMs` no earlier than the statement was sent, and another replica
 * claims the row only after `lease_until` by the same database clock, so the deadline is conservative with no
 * read of the database clock and no extra round trip: it is what the claim already knows. `heldSince` 0 (not
 * stamped: a row read, not claimed) gives a deadline in the past: nothing leaves on an unknown lease.
 */
export function leaseDeadline(heldSince: number, leaseMs: number): number {
  if (heldSince <= 0) return Number.NEGATIVE_INFINITY;
  return heldSince + leaseMs - Math.min(LEASE_DEADLINE_MARGIN_MAX_MS, leaseMs / 10);
}
