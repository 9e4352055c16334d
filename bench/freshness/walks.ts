import { withClient } from '../chaos/database';

/** One per-event walk of the service under test, from its own `sync_passes` (benches may read any table). */
export interface EventWalk {
  startedMs: number;
  /** NaN while it was still running when read. */
  finishedMs: number;
  status: string;
  trigger: string;
  pages: number;
}

/** A's per-event walks (`event_listings` passes) that started at or after `fromMs`, per event, oldest first. */
export async function eventWalks(databaseUrl: string, fromMs: number): Promise<Map<string, EventWalk[]>> {
  const rows = await withClient(databaseUrl, async (client) => {
    const result = await client.query<{
      event_id: string;
      started_ms: string;
      finished_ms: string | null;
      status: string;
      trigger: string;
      pages: number;
    }>(
      `SELECT scope_event_id::text AS event_id, (extract(epoch FROM started_at) * 1000)::text AS started_ms,
         (extract(epoch FROM finished_at) * 1000)::text AS finished_ms, status, trigger, pages
       FROM sync_passes
       WHERE resource = 'event_listings' AND started_at >= to_timestamp($1::float8 / 1000)
       ORDER BY started_at`,
      [fromMs],
    );
    return result.rows;
  });
  const byEvent = new Map<string, EventWalk[]>();
  for (const row of rows) {
    const list = byEvent.get(row.event_id) ?? [];
    list.push({
      startedMs: Number(row.started_ms),
      finishedMs: row.finished_ms === null ? Number.NaN : Number(row.finished_ms),
      status: row.status,
      trigger: row.trigger,
      pages: row.pages,
    });
    byEvent.set(row.event_id, list);
  }
  return byEvent;
}

/** `t` against a browse that started at `startMs`, in seconds: `+0.42 s` after it, `-1.10 s` before. */
export function relativeTime(t: number, startMs: number): string {
  return `${t >= startMs ? '+' : ''}${((t - startMs) / 1000).toFixed(2)} s`;
}

/** The walks of one event around a browse that started at `startMs`: the last `count` begun before its end. */
export function walksAround(
  walks: readonly EventWalk[] | undefined,
  startMs: number,
  endMs: number,
  count = 3,
): string {
  const at = (t: number): string => relativeTime(t, startMs);
  const near = (walks ?? []).filter((w) => w.startedMs <= endMs).slice(-count);
  if (near.length === 0) return "A's walks of the event: none begun before the browse ended";
  return `A's walks of the event begun at ${near
    .map(
      (w) =>
        `${at(w.startedMs)} (${w.trigger}, ${w.status}${
          Number.isFinite(w.finishedMs)
            ? ` after ${Math.round(w.finishedMs - w.startedMs)} ms`
            : ', unfinished'
        })`,
    )
    .join(', ')}`;
}

/**
 * How evenly A walked the busy events while the market changed them: the gaps between consecutive walk starts of
 * one event (p50 / p90 / max over all events), and the per-event mean gap of the least and the most walked event.
 */
export function walkGaps(
  walks: ReadonlyMap<string, EventWalk[]>,
  events: readonly string[],
  fromMs: number,
  toMs: number,
): { gaps: number[]; perEventMean: { eventId: string; meanMs: number; walks: number }[] } {
  const gaps: number[] = [];
  const perEventMean: { eventId: string; meanMs: number; walks: number }[] = [];
  for (const eventId of events) {
    const starts = (walks.get(eventId) ?? []).map((w) => w.startedMs).filter((t) => t >= fromMs && t <= toMs);
    for (let i = 1; i < starts.length; i++) gaps.push(starts[i] - starts[i - 1]);
    perEventMean.push({
      eventId,
      walks: starts.length,
      meanMs: starts.length > 1 ? (starts[starts.length - 1] - starts[0]) / (starts.length - 1) : Number.NaN,
    });
  }
  perEventMean.sort((a, b) => a.meanMs - b.meanMs);
  return { gaps, perEventMean };
}
