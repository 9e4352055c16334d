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

/**
 * One-page walks at once, at most, per unit of SYNC_HOT_CONCURRENCY: 12 by default, which leaves a quarter of the
 * upstream client's bulkhead (UPSTREAM_MAX_CONCURRENCY, 16) to checkout, selling and fresh reads.
 */
export const ONE_PAGE_SLOTS_PER_CONCURRENCY = 3;
/** Walks in flight beyond what Little's law asks for: walk durations vary, and a slot short is a walk not started. */
const SLOT_HEADROOM = 1.5;

/**
 * How many hot walks may run at once here. A walk of more than one page holds a pooled connection from its second
 * page on, so those stay within `concurrency` (SYNC_HOT_CONCURRENCY) — the scheduler counts them apart. A one-page
 * walk holds no connection while the upstream answers (docs/catalog-sync.md "One-page walks"), so what bounds it is
 * what the budget needs: by Little's law, starting `ratePerSecond` walks a second that each take `walkMs` keeps
 * rate × walkMs / 1000 in flight. With headroom, at least `concurrency`, at most ONE_PAGE_SLOTS_PER_CONCURRENCY ×
 * `concurrency`. A fixed four slots capped a replica at 4 / walk duration: on a loaded machine (walks of ~370 ms,
 * mostly the upstream's answer) ~11 walks a second of a budget of 45 (session 18). The budget still paces the
 * walks (HotBudget); slots only stop a slow upstream from idling it. Pure.
 */
export function walkSlots(ratePerSecond: number, walkMs: number, concurrency: number): number {
  const needed = Math.ceil(((Math.max(0, ratePerSecond) * Math.max(0, walkMs)) / 1000) * SLOT_HEADROOM);
  return Math.min(ONE_PAGE_SLOTS_PER_CONCURRENCY * concurrency, Math.max(concurrency, needed));
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
