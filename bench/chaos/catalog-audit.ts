import type { Client } from 'pg';

/**
 * The catalog-event figures of a chaos run (docs/chaos.md "Webhooks"): the run's client is subscribed to the run's
 * events (its endpoint's `event_ids`), so every change of the mirror on those events writes a `listing.*` event to
 * its feed in the change's own transaction. Read in one snapshot with the mirror, the events must tell the mirror's
 * story: each follows from the listing's previous one, and the last one of each listing is what the mirror holds.
 */
export interface CatalogAuditFigures {
  /** `listing.*` events of the run's client in the database (one snapshot with the mirror). */
  catalogEvents: number;
  /** Listings with at least one such event since the last backfill marker. */
  listingsWithEvents: number;
  /** `sync.backfill_completed` of the listings mirror in the client's feed (a PostgreSQL restart looks like a restore). */
  backfills: number;
  /** Bought listings removed (their mirror `removed_at`) before the last backfill ended, with no event since it
   * (that quiet pass may be the removal: it announces only its marker). */
  settledByBackfill: number;
  /** Confirmed orders whose listing the mirror holds as removed. */
  soldRemoved: number;
  /** ... of which the listing's last event is `listing.removed` with reason `sold`. */
  soldAnnounced: number;
  /** ... of which it names another reason (a kill between the landing and the order's commit: `gone_upstream`). */
  soldOtherReason: number;
  /** Confirmed orders whose listing the mirror still serves at the end (not refreshed yet: information). */
  confirmedStillServed: number;
  /** `listing.removed` events of tickets no order of the run confirmed (the run's market has no outside changes). */
  removedUnsold: number;
  // Breaches: every one must be 0.
  /** An event that does not follow from the listing's previous one (listed while listed, removed while removed, a
   * previous price or a price that is not the last one announced). */
  catalogIncoherent: number;
  /** A listing whose last event disagrees with its mirror row (state or price), or a removed listing with none. */
  catalogMirrorMismatch: number;
}

interface ListingState {
  active: boolean;
  price: string;
  reason: string | null;
}

const NOTES_PER_CLASS = 5;

/**
 * Audits the catalog events of `clientId` on `eventIds` against the mirror (`listings`) and the confirmed orders,
 * all read in one REPEATABLE READ transaction so that no write lands between the reads.
 */
export async function auditCatalog(
  db: Client,
  input: { clientId: string; eventIds: readonly string[]; note: (line: string) => void },
): Promise<CatalogAuditFigures> {
  const noted = new Map<string, number>();
  const note = (kind: string, line: string): void => {
    const n = (noted.get(kind) ?? 0) + 1;
    noted.set(kind, n);
    if (n <= NOTES_PER_CLASS) input.note(line);
  };
  await db.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  try {
    // The client's listing events and the backfills of the listings mirror that restarted the story (a PostgreSQL
    // restart looks like a restore: the next full pass is a quiet backfill that ends with one marker).
    const events = await db.query<{
      id: string;
      type: string;
      data: Record<string, unknown>;
      at: string;
    }>(
      `SELECT id, type, payload AS data, (extract(epoch FROM occurred_at) * 1000)::text AS at
       FROM outbox_events
       WHERE client_id = $1::uuid
         AND (type LIKE 'listing.%' OR (type = 'sync.backfill_completed' AND payload->>'resource' = 'listings'))
       ORDER BY xact_id, position`,
      [input.clientId],
    );
    const mirror = await db.query<{ key: string; price: string; active: boolean; removed_ms: string | null }>(
      `SELECT event_id::text || '/' || ticket_id::text AS key, ask_price_minor::text AS price,
              removed_at IS NULL AS active, (extract(epoch FROM removed_at) * 1000)::text AS removed_ms
       FROM listings WHERE event_id = ANY ($1::numeric[])`,
      [input.eventIds],
    );
    const confirmed = await db.query<{ key: string }>(
      `SELECT DISTINCT event_id::text || '/' || ticket_id::text AS key FROM orders
       WHERE client_id = $1::uuid AND state = 'confirmed' AND event_id = ANY ($2::numeric[])`,
      [input.clientId, input.eventIds],
    );
    const backfills = events.rows.filter((e) => e.type === 'sync.backfill_completed');
    const lastBackfillAt = backfills.length > 0 ? Number(backfills[backfills.length - 1].at) : null;
    const f: CatalogAuditFigures = {
      catalogEvents: events.rows.length - backfills.length,
      backfills: backfills.length,
      settledByBackfill: 0,
      listingsWithEvents: 0,
      soldRemoved: 0,
      soldAnnounced: 0,
      soldOtherReason: 0,
      confirmedStillServed: 0,
      removedUnsold: 0,
      catalogIncoherent: 0,
      catalogMirrorMismatch: 0,
    };
    const sold = new Set(confirmed.rows.map((r) => r.key));
    const told = replay(events.rows, (line) => {
      f.catalogIncoherent++;
      note('incoherent', line);
    });
    f.listingsWithEvents = told.size;
    const rows = new Map(mirror.rows.map((r) => [r.key, r]));
    for (const [key, last] of told) {
      const row = rows.get(key);
      if (!last.active && !sold.has(key)) f.removedUnsold++;
      const agrees = last.active
        ? row?.active === true && row.price === last.price
        : row === undefined || !row.active;
      if (agrees) continue;
      f.catalogMirrorMismatch++;
      note(
        'mirror',
        `listing ${key}: last event ${last.active ? `listed at ${last.price}` : `removed (${last.reason})`}, ` +
          `mirror ${row ? (row.active ? `active at ${row.price}` : 'removed') : 'has no row'}`,
      );
    }
    for (const key of sold) {
      const row = rows.get(key);
      if (row?.active) {
        f.confirmedStillServed++;
        continue;
      }
      if (!row) continue;
      f.soldRemoved++;
      const last = told.get(key);
      if (!last && lastBackfillAt !== null && Number(row.removed_ms) <= lastBackfillAt) {
        // Removed before the last backfill ended: that quiet pass may be what removed it (its marker says so).
        f.settledByBackfill++;
      } else if (!last) {
        // A removal the mirror holds must have been announced: the client was subscribed before the first order.
        f.catalogMirrorMismatch++;
        note('mirror', `listing ${key}: bought and removed in the mirror, no catalog event`);
      } else if (last.reason === 'sold') f.soldAnnounced++;
      else if (!last.active) f.soldOtherReason++;
    }
    return f;
  } finally {
    await db.query('ROLLBACK');
  }
}

/**
 * Each listing's story in event order: its last state (active and price, or removed and why). `incoherent` is told
 * of every event that does not follow from the previous one. Before its first event a listing's state is unknown (the
 * backfill announces nothing), so a first event is judged only on its own fields; a `sync.backfill_completed` marker
 * makes every listing's state unknown again.
 */
export function replay(
  events: readonly { id: string; type: string; data: Record<string, unknown> }[],
  incoherent: (line: string) => void,
): Map<string, ListingState> {
  const told = new Map<string, ListingState>();
  for (const { id, type, data } of events) {
    if (type === 'sync.backfill_completed') {
      // A quiet backfill rewrote the mirror: what a consumer knew before it is void (it reads the mirror anew).
      told.clear();
      continue;
    }
    const key = `${String(data.event_id)}/${String(data.ticket_id)}`;
    const before = told.get(key);
    const price = String(data.price_minor);
    const wrong = (why: string): void => incoherent(`${id} ${type} ${key}: ${why}`);
    if (type === 'listing.listed') {
      if (before?.active) wrong(`listed while listed at ${before.price}`);
      told.set(key, { active: true, price, reason: null });
    } else if (type === 'listing.price_changed') {
      const previous = String(data.previous_price_minor);
      if (before && !before.active) wrong('repriced while removed');
      else if (before && previous !== before.price)
        wrong(`previous price ${previous}, last announced ${before.price}`);
      if (previous === price) wrong(`price unchanged (${price})`);
      told.set(key, { active: true, price, reason: null });
    } else if (type === 'listing.removed') {
      const reason = String(data.reason);
      if (before && !before.active) wrong('removed while removed');
      else if (before && price !== before.price) wrong(`removed at ${price}, last announced ${before.price}`);
      if (!['sold', 'cancelled', 'gone_upstream'].includes(reason)) wrong(`reason ${reason}`);
      told.set(key, { active: false, price, reason });
    } else wrong('unknown listing event type');
  }
  return told;
}

/** The catalog breaches with their counts (empty: none). */
export function catalogBreachesOf(f: CatalogAuditFigures): string[] {
  const checks: [string, number][] = [
    ['catalog events that do not follow from the listing’s previous one', f.catalogIncoherent],
    ['listings whose last catalog event disagrees with the mirror', f.catalogMirrorMismatch],
  ];
  return checks.filter(([, n]) => n !== 0).map(([what, n]) => `${what}: ${n}`);
}
