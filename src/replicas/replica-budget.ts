import type { SharedThrottle } from '../upstream/upstream.types';

/** Another replica's heartbeat row as this replica's beat reads it; every age by the database clock (ms). */
export interface ReplicaRow {
  instanceId: string;
  /** Since its last heartbeat; slightly negative when its beat committed after this statement began. */
  seenMsAgo: number;
  /** It marked itself stopped on a graceful shutdown. */
  stopped: boolean;
  /** Its own last 429: the fraction of its maximum rate it lowered to, and how long ago. */
  throttleFactor: number | null;
  throttledMsAgo: number | null;
  /** What is left of the pause that 429's Retry-After asked for (0: none). */
  pausedForMs: number;
}

/** What one heartbeat tells this replica: how many replicas share the budgets, and the others' 429s. */
export interface HeartbeatView {
  /** Live replicas, this one included (at least 1). */
  live: number;
  throttles: SharedThrottle[];
}

/** A replica counts while its last heartbeat is younger than the cut-off and it has not said it stopped. */
export function isLive(row: ReplicaRow, deadAfterMs: number): boolean {
  return !row.stopped && row.seenMsAgo < deadAfterMs;
}

/**
 * This replica's part of a per-window budget: budget / live, rounded down so the replicas together never exceed
 * it, but at least 1 (a budget smaller than the replica count would otherwise refuse everything).
 */
export function budgetShare(budget: number, live: number): number {
  return Math.max(1, Math.floor(budget / Math.max(1, live)));
}

/**
 * Reads the other replicas' rows: itself plus the live ones share the budgets; every 429 still recovering is
 * passed on, a dead or stopped replica's too (it says something about the upstream, not about that replica).
 */
export function readHeartbeat(others: readonly ReplicaRow[], deadAfterMs: number): HeartbeatView {
  const throttles: SharedThrottle[] = [];
  for (const row of others) {
    if (row.throttleFactor === null || row.throttledMsAgo === null) continue;
    throttles.push({
      factor: row.throttleFactor,
      ageMs: row.throttledMsAgo,
      pauseMs: Math.max(0, row.pausedForMs),
    });
  }
  return { live: 1 + others.filter((row) => isLive(row, deadAfterMs)).length, throttles };
}
