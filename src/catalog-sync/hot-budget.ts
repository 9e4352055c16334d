/** Fraction of this replica's upstream rate hot walks may use while no full pass runs here (the rest: reads, checkout). */
export const HOT_SHARE_IDLE = 0.9;

/**
 * The hot walks' share of this replica's upstream request rate: all but SYNC_FULL_PASS_MIN_SHARE_PCT while a
 * full pass runs on this replica (so full passes, which keep the cold tail and removals correct, are never
 * starved), HOT_SHARE_IDLE otherwise.
 */
export function hotShare(fullPassRunning: boolean, fullPassMinSharePct: number): number {
  return fullPassRunning ? Math.min(HOT_SHARE_IDLE, 1 - fullPassMinSharePct / 100) : HOT_SHARE_IDLE;
}

/**
 * The hot walks' pacing: a token bucket in upstream pages, refilled at the hot share of the limiter's current
 * rate (which already is this replica's share of the service's budget, lowered after 429s), one second of
 * burst. A walk is started when a token is there and takes its estimated pages (the bucket may go below zero:
 * the next walks wait); its real cost is settled when it ends. The upstream client's limiter still takes one
 * token per request, so the budget is never exceeded whatever this estimates; pacing only decides how much of
 * it hot walks take. Pure: time and rate are passed in.
 */
export class HotBudget {
  private tokens = 0;
  private at: number | null = null;

  refill(nowMs: number, ratePerSecond: number): void {
    const rate = Math.max(0, ratePerSecond);
    const elapsed = this.at === null ? 1000 : Math.max(0, nowMs - this.at);
    this.at = nowMs;
    this.tokens = Math.min(Math.max(1, rate), this.tokens + (elapsed / 1000) * rate);
  }

  /** Takes `pages` when at least one token is there; false (nothing taken) otherwise. */
  take(pages: number): boolean {
    if (this.tokens < 1) return false;
    this.tokens -= Math.max(1, pages);
    return true;
  }

  /** A walk took `actual` pages where `estimated` were taken (or none: a walk not started gives them back). */
  settle(estimated: number, actual: number): void {
    this.tokens += Math.max(1, estimated) - actual;
  }

  get available(): number {
    return this.tokens;
  }
}

/** A hot event as the scheduler ranks it. */
export interface HotCandidate {
  eventId: string;
  score: number;
  asOfMs: number | null;
  pages: number;
}

/** A hot event ranked for a walk: `due` when the ceiling (target) requires it, otherwise spare-budget work. */
export interface RankedWalk extends HotCandidate {
  due: boolean;
}

/**
 * The hot events to walk, in order. First the due ones: data that will be older than `targetMs` by the time a
 * walk started at the next tick would complete (age + `leadMs` ≥ target, lead = tick + a walk's duration).
 * Then, for spare budget, the rest whose data is at least `minIntervalMs` old (SYNC_HOT_MIN_INTERVAL_MS, the
 * floor). Within each group by urgency, age / target × log2(2 + demand): the most stale and most demanded
 * first, a never-walked event (no data_as_of) before all. Events being walked are left out. Pure.
 */
export function dueWalks(
  events: readonly HotCandidate[],
  nowMs: number,
  targetMs: number,
  leadMs: number,
  running: ReadonlySet<string>,
  minIntervalMs = Number.POSITIVE_INFINITY,
): RankedWalk[] {
  const urgency = new Map<RankedWalk, number>();
  for (const event of events) {
    if (running.has(event.eventId)) continue;
    const age = event.asOfMs === null ? Number.POSITIVE_INFINITY : nowMs - event.asOfMs;
    const due = age + leadMs >= targetMs;
    if (!due && age < minIntervalMs) continue;
    urgency.set(
      { ...event, due },
      (Math.min(age, 1e12) / targetMs) * Math.log2(2 + Math.max(0, event.score)),
    );
  }
  return [...urgency.keys()].sort(
    (a, b) => Number(b.due) - Number(a.due) || (urgency.get(b) ?? 0) - (urgency.get(a) ?? 0),
  );
}
