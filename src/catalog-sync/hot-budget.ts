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

/**
 * The due hot events, most urgent first: due when its data will be older than `targetMs` by the time a walk
 * started at the next tick would complete (age + `leadMs` ≥ target, lead = tick + a walk's duration); urgency is age / target × log2(2 + demand), so the most stale and most demanded come
 * first and a never-walked event (no data_as_of) before all. Pure.
 */
export function dueWalks(
  events: readonly HotCandidate[],
  nowMs: number,
  targetMs: number,
  leadMs: number,
  running: ReadonlySet<string>,
): HotCandidate[] {
  const urgency = new Map<HotCandidate, number>();
  for (const event of events) {
    if (running.has(event.eventId)) continue;
    const age = event.asOfMs === null ? Number.POSITIVE_INFINITY : nowMs - event.asOfMs;
    if (age + leadMs < targetMs) continue;
    urgency.set(event, (Math.min(age, 1e12) / targetMs) * Math.log2(2 + Math.max(0, event.score)));
  }
  return [...urgency.keys()].sort((a, b) => (urgency.get(b) ?? 0) - (urgency.get(a) ?? 0));
}
