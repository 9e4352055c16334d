// One piece: the read API's hand-written SQL over the mirror's `events` and `listings` (keyset pages, lookups,
// the mirror state and generation) and the one write a live re-read makes (applyLiveListing), sharing one column
// list and one row mapping per resource; a repository owning its tables' SQL reads best whole.
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Pool, QueryResultRow } from 'pg';
import type { DataSource, QueryResult } from 'typeorm';
import type {
  EventRow,
  EventsQuery,
  ListingRow,
  ListingsQuery,
  ListingSummaryRow,
  LiveListingObservation,
  LiveListingResult,
  MirrorStateRow,
} from './catalog-mirror.types';
import { PreparedStatements } from '../common/prepared-statements';
import { PG_POOL } from '../database/database.module';
import { isoOf, isoOrNull, keyOf } from './catalog-mirror.timestamps';
import { mapListing } from './catalog-sync.mapper';
import { MIRROR_GENERATION_CHANNEL } from './mirror-generation.repository';
import { NameSearchPlans } from './name-search-plan';

// Timestamps leave PostgreSQL as the text of their UTC wall time (exact to the microsecond, so sort keys
// survive the round trip through a cursor) and become ISO text and keys by string operations
// (catalog-mirror.timestamps.ts): no `Date` parse per column, no `to_char` per row.
const UTC = (column: string): string => `(${column} AT TIME ZONE 'UTC')::text AS ${column}`;

const LISTING_COLUMNS = `event_id::text AS event_id, ticket_id::text AS ticket_id,
  ask_price_minor::text AS ask_price_minor, expires_at::text AS expires_at, raw,
  ${UTC('first_seen_at')}, ${UTC('last_seen_at')}, ${UTC('removed_at')}`;

const EVENT_COLUMNS = `event_id::text AS event_id, name, start_at_raw, ${UTC('start_at')},
  ${UTC('first_seen_at')}, ${UTC('last_seen_at')}, ${UTC('removed_at')}`;

/**
 * The database's epoch: when its server started. A restore or a failover starts another server, so a mirror
 * generation read under another epoch is another history, never comparable by number with the one before.
 */
const EPOCH = `pg_postmaster_start_time()::text`;

/**
 * The plain columns an events page's inner scans carry: a name search sorts every matching row before its
 * LIMIT, and PostgreSQL computes a scan's select list for each of them, so the text conversions
 * (EVENT_COLUMNS) run in the outer select, on the page's rows only.
 */
const EVENT_SCAN_COLUMNS = 'event_id, name, start_at_raw, start_at, first_seen_at, last_seen_at, removed_at';

/** A listing as selected (timestamps as UTC text), before `listingRow`. */
type ListingTextRow = Omit<ListingRow, 'first_seen_key'>;
/** An event as selected (timestamps as UTC text), before `eventRow`. */
type EventTextRow = Omit<EventRow, 'start_key'>;

function listingRow(row: ListingTextRow): ListingRow {
  const firstSeen = row.first_seen_at;
  return {
    event_id: row.event_id,
    ticket_id: row.ticket_id,
    ask_price_minor: row.ask_price_minor,
    expires_at: row.expires_at,
    raw: row.raw,
    first_seen_at: isoOf(firstSeen),
    last_seen_at: isoOf(row.last_seen_at),
    removed_at: isoOrNull(row.removed_at),
    first_seen_key: keyOf(firstSeen),
  };
}

function eventRow(row: EventTextRow): EventRow {
  const start = row.start_at;
  return {
    event_id: row.event_id,
    name: row.name,
    start_at_raw: row.start_at_raw,
    start_at: isoOrNull(start),
    start_key: start === null ? null : keyOf(start),
    first_seen_at: isoOf(row.first_seen_at),
    last_seen_at: isoOf(row.last_seen_at),
    removed_at: isoOrNull(row.removed_at),
  };
}

/** ORDER BY and the keyset comparison of each listing sort (columns in index order). */
const LISTING_SORTS = {
  price_asc: { all: ['ask_price_minor', 'event_id', 'ticket_id'], dir: 'ASC', op: '>' },
  price_desc: { all: ['ask_price_minor', 'event_id', 'ticket_id'], dir: 'DESC', op: '<' },
  newest: { all: ['first_seen_at', 'event_id', 'ticket_id'], dir: 'DESC', op: '<' },
} as const;

/** The last completed full pass of a resource as JSON (id, started_at). */
const lastCompletedPass = (
  resource: string,
): string => `(SELECT json_build_object('id', id::text, 'started_at', started_at)
    FROM sync_passes WHERE resource = '${resource}' AND status = 'completed'
    ORDER BY finished_at DESC, id DESC LIMIT 1)`;

/** Collects positional parameters while a statement is assembled from fixed fragments (never input text). */
class Params {
  readonly values: (string | number | null)[] = [];
  add(value: string | number | null, cast: string): string {
    this.values.push(value);
    return `$${this.values.length}::${cast}`;
  }
}

/**
 * The statement of one page (limit + 1 rows) of active listings, of one event or all, in the requested order,
 * after the keyset position `after` ([price or first-seen key, event_id, ticket_id]). Its text depends only on the
 * query's shape (sort, which filters, with or without a position); every value is a parameter.
 */
export function listingsStatement(query: ListingsQuery): {
  text: string;
  values: (string | number | null)[];
} {
  const p = new Params();
  const sort = LISTING_SORTS[query.sort];
  const where = ['removed_at IS NULL'];
  const keyCast = query.sort === 'newest' ? 'timestamptz' : 'numeric';
  if (query.eventId !== undefined) where.push(`event_id = ${p.add(query.eventId, 'numeric')}`);
  if (query.minPrice !== undefined) where.push(`ask_price_minor >= ${p.add(query.minPrice, 'numeric')}`);
  if (query.maxPrice !== undefined) where.push(`ask_price_minor <= ${p.add(query.maxPrice, 'numeric')}`);
  // Within one event the event_id column is constant: compare (key, ticket) so the (event_id, key, ticket)
  // index serves the range directly.
  const columns = query.eventId !== undefined ? [sort.all[0], sort.all[2]] : [...sort.all];
  if (query.after) {
    const [key, eventId, ticketId] = query.after;
    const position =
      query.eventId !== undefined
        ? [p.add(key, keyCast), p.add(ticketId, 'numeric')]
        : [p.add(key, keyCast), p.add(eventId, 'numeric'), p.add(ticketId, 'numeric')];
    where.push(`(${columns.join(', ')}) ${sort.op} (${position.join(', ')})`);
  }
  // Qualified: a bare name would sort by the output column of that name (the ::text copy).
  const order = columns.map((c) => `listings.${c} ${sort.dir}`).join(', ');
  const text = `SELECT ${LISTING_COLUMNS} FROM listings WHERE ${where.join(' AND ')}
    ORDER BY ${order} LIMIT ${p.add(query.limit + 1, 'int')}`;
  return { text, values: p.values };
}

/**
 * What decides `listingsStatement`'s text, without building it: the sort, whether it is one event's page, which
 * price filters are present, and whether there is a position. Queries of one shape share one statement text, so
 * `listingsPages` can read them together (the read batches group by it). Kept beside the statement it describes;
 * a spec holds the two equivalent.
 */
export function listingsPageShape(query: ListingsQuery): string {
  return `${query.sort}|${query.eventId === undefined ? 'all' : 'event'}|${query.minPrice === undefined ? '' : 'min'}|${query.maxPrice === undefined ? '' : 'max'}|${query.after === undefined ? '' : 'after'}`;
}

/**
 * The read side of the mirror in hand-written SQL (the hot paths of the marketplace's pages): keyset pages
 * on the partial indexes of `events`/`listings`, never OFFSET. Runs on the app's pg pool (PG_POOL):
 * one round trip per page, no entity hydration (the rows go straight to the read API's mapper).
 */
@Injectable()
export class CatalogMirrorRepository {
  /** Named prepared statements (a bounded set of texts: fixed fragments only). */
  private readonly statements: PreparedStatements;
  /** Per search term, which index reads a first page best (name-search-plan.ts). */
  private readonly searchPlans = new NameSearchPlans();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(PG_POOL) private readonly pool: Pool,
  ) {
    this.statements = new PreparedStatements(pool, 'mirror_read');
  }

  private async rows<T extends QueryResultRow>(text: string, values: unknown[]): Promise<T[]> {
    return (await this.pool.query<T>(text, values)).rows;
  }

  /**
   * Like `rows`, as a named prepared statement (parsed once per pooled connection; PostgreSQL may then
   * reuse a generic plan). Only for statements whose best plan does not depend on the values: the primary
   * key reads and one event's keyset pages (always that event's index). The name search is not prepared:
   * a generic plan of `lower(name) LIKE $1` cannot use the trigram index the way a plan for the pattern does.
   */
  private prepared<T extends QueryResultRow>(text: string, values: unknown[]): Promise<T[]> {
    return this.statements.rows<T>(text, values);
  }

  /**
   * One page (limit + 1 rows) of active listings, of one event or all, in the requested order, after the
   * keyset position `after` ([price or first-seen key, event_id, ticket_id]).
   */
  async listingsPage(query: ListingsQuery): Promise<ListingRow[]> {
    const { text, values } = listingsStatement(query);
    const read = query.eventId !== undefined ? this.prepared.bind(this) : this.rows.bind(this);
    return (await read<ListingTextRow>(text, values)).map(listingRow);
  }

  /**
   * Several pages of one event's listings in one round trip, each exactly as `listingsPage` reads it: the
   * queries must share their shape (sort, which filters, with or without a position; any event, values and
   * limits), so that their statement is one text. The statement runs once per query (`CROSS JOIN LATERAL`
   * over the queries' parameters, `unnest`ed as text and cast as in the single statement: the same index range
   * scan, in a nested loop) and is prepared: the plan is that nested loop whatever the values. Rows come back
   * per query in its page order (one inner scan's rows, LIMIT after ORDER BY), grouped by `batch_index`.
   */
  async listingsPages(queries: readonly ListingsQuery[]): Promise<ListingRow[][]> {
    const statements = queries.map(listingsStatement);
    const first = statements[0];
    if (!first) return [];
    if (queries.some((q) => q.eventId === undefined) || statements.some((s) => s.text !== first.text))
      throw new Error("listingsPages: every query must be one event's page of the same shape");
    const columns = first.values.map((_, i) => `p${i + 1}`);
    const inner = first.text.replace(/\$(\d+)::/g, (_, i: string) => `k.p${i}::`);
    const text = `SELECT k.batch_index::int AS batch_index, page.* FROM unnest(${columns.map((_, i) => `$${i + 1}::text[]`).join(', ')})
      WITH ORDINALITY AS k(${columns.join(', ')}, batch_index) CROSS JOIN LATERAL (${inner}) page`;
    const values = columns.map((_, i) => statements.map((s) => s.values[i] ?? null));
    const pages: ListingRow[][] = queries.map(() => []);
    for (const row of await this.prepared<ListingTextRow & { batch_index: number }>(text, values)) {
      pages[row.batch_index - 1]?.push(listingRow(row));
    }
    return pages;
  }

  /** One listing, active or removed (the read API tells the two apart); undefined when never mirrored. */
  async listing(eventId: string, ticketId: string): Promise<ListingRow | undefined> {
    const rows = await this.prepared<ListingTextRow>(
      `SELECT ${LISTING_COLUMNS} FROM listings WHERE event_id = $1::numeric AND ticket_id = $2::numeric`,
      [eventId, ticketId],
    );
    return rows[0] && listingRow(rows[0]);
  }

  /**
   * Several listings by key in one round trip (one primary-key probe per key), active or removed; keys
   * never mirrored are simply absent. Prepared: the plan is the same nested loop for any keys.
   */
  async listingsByKey(keys: readonly (readonly [string, string])[]): Promise<ListingRow[]> {
    const rows = await this.prepared<ListingTextRow>(
      `SELECT ${LISTING_COLUMNS} FROM unnest($1::numeric[], $2::numeric[]) AS k(e, t)
       JOIN listings ON listings.event_id = k.e AND listings.ticket_id = k.t`,
      [keys.map((k) => k[0]), keys.map((k) => k[1])],
    );
    return rows.map(listingRow);
  }

  /**
   * One page (limit + 1 rows) of events ordered by (start_at, event_id), events whose start could not be
   * parsed last (NULLS LAST, as the index). A first page without a time window is one scan in the index's
   * own order (ASC NULLS LAST); after a dated position, two index range scans glued in order instead of an
   * OR, so each stays an index scan (a time window or an undated position needs one of the two only).
   */
  async eventsPage(query: EventsQuery): Promise<EventRow[]> {
    const p = new Params();
    const where = ['removed_at IS NULL'];
    let pattern = '';
    if (query.nameContains !== undefined) {
      pattern = p.add(`%${query.nameContains.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`, 'text');
      where.push(`lower(name) LIKE ${pattern}`);
    }
    const limit = p.add(query.limit + 1, 'int');
    const windowed = query.startsAfter !== undefined || query.startsBefore !== undefined;
    const dated = [...where];
    if (query.startsAfter !== undefined) dated.push(`start_at > ${p.add(query.startsAfter, 'timestamptz')}`);
    if (query.startsBefore !== undefined)
      dated.push(`start_at < ${p.add(query.startsBefore, 'timestamptz')}`);
    const scan = (conditions: string[], order: string): string =>
      `(SELECT ${EVENT_SCAN_COLUMNS} FROM events WHERE ${conditions.join(' AND ')}
        ORDER BY ${order} LIMIT ${limit})`;
    const byStart = 'events.start_at, events.event_id';
    const [afterKey, afterId] = query.after ?? [];
    const parts: string[] = [];
    if (query.after === undefined && !windowed && query.nameContains !== undefined) {
      return this.searchFirstPage(query.nameContains.toLowerCase(), { p, pattern, limit }, query.limit + 1);
    }
    if (query.after === undefined) {
      // A window bounds start_at, which excludes the undated events; without one the index order (NULLS
      // LAST) is already the page order, undated events included: one scan, as a hand-written query.
      parts.push(scan(windowed ? [...dated, 'start_at IS NOT NULL'] : dated, byStart));
    } else if (afterKey !== null && afterKey !== undefined) {
      dated.push(
        `(start_at, event_id) > (${p.add(afterKey, 'timestamptz')}, ${p.add(afterId ?? '0', 'numeric')})`,
      );
      parts.push(scan(dated, byStart));
      if (!windowed) parts.push(scan([...where, 'start_at IS NULL'], 'events.event_id'));
    } else if (!windowed) {
      parts.push(
        scan(
          [...where, 'start_at IS NULL', `event_id > ${p.add(afterId ?? '0', 'numeric')}`],
          'events.event_id',
        ),
      );
    }
    if (parts.length === 0) return [];
    // One scan is already in page order (PostgreSQL keeps it: no Sort); a union is sorted and cut.
    const text = `SELECT ${EVENT_COLUMNS} FROM (${parts.join(' UNION ALL ')}) page
      ORDER BY page.start_at ASC NULLS LAST, page.event_id ASC${parts.length > 1 ? ` LIMIT ${limit}` : ''}`;
    return (await this.rows<EventTextRow>(text, p.values)).map(eventRow);
  }

  /**
   * A name search's first page (no window, no cursor): the trigram index, or for a term that fills its page from
   * the first 10 × (limit + 1) events in start order (name-search-plan.ts) that walk, with the trigram index in
   * the same statement when the walk falls short (its branch runs only then: a one-time filter). Both give the
   * exact page; `walked` says which did, and teaches the plan. `pattern` and `limit` are parameters already in `p`.
   */
  private async searchFirstPage(
    term: string,
    { p, pattern, limit }: { p: Params; pattern: string; limit: string },
    rows: number,
  ): Promise<EventRow[]> {
    const trigram = `SELECT ${EVENT_SCAN_COLUMNS} FROM events WHERE removed_at IS NULL AND lower(name) LIKE ${pattern}
      ORDER BY events.start_at, events.event_id LIMIT ${limit}`;
    if (this.searchPlans.plan(term) === 'trigram') {
      const text = `SELECT ${EVENT_COLUMNS} FROM (${trigram}) page ORDER BY page.start_at ASC NULLS LAST, page.event_id ASC`;
      return (await this.rows<EventTextRow>(text, p.values)).map(eventRow);
    }
    const walkRows = p.add(rows * 10, 'int');
    const text = `WITH walk AS MATERIALIZED (SELECT ${EVENT_SCAN_COLUMNS} FROM (SELECT ${EVENT_SCAN_COLUMNS} FROM events
        WHERE removed_at IS NULL ORDER BY events.start_at, events.event_id LIMIT ${walkRows}) w
        WHERE lower(w.name) LIKE ${pattern} ORDER BY w.start_at, w.event_id LIMIT ${limit})
      SELECT ${EVENT_COLUMNS}, walked FROM (
        SELECT walk.*, true AS walked FROM walk WHERE (SELECT count(*) FROM walk) = ${limit}
        UNION ALL
        (SELECT ${EVENT_SCAN_COLUMNS}, false FROM events WHERE (SELECT count(*) FROM walk) < ${limit}
          AND removed_at IS NULL AND lower(name) LIKE ${pattern} ORDER BY events.start_at, events.event_id LIMIT ${limit})
      ) page ORDER BY page.start_at ASC NULLS LAST, page.event_id ASC`;
    const found = await this.rows<EventTextRow & { walked: boolean }>(text, p.values);
    this.searchPlans.learn(term, found[0]?.walked ?? false);
    return found.map(eventRow);
  }

  /** One event, active or removed; undefined when never mirrored. */
  async event(eventId: string): Promise<EventRow | undefined> {
    const rows = await this.prepared<EventTextRow>(
      `SELECT ${EVENT_COLUMNS} FROM events WHERE event_id = $1::numeric`,
      [eventId],
    );
    return rows[0] && eventRow(rows[0]);
  }

  /** Active listing count and the lowest and highest ask of one event (index-only over the price index). */
  async listingSummary(eventId: string): Promise<ListingSummaryRow> {
    const rows = await this.prepared<ListingSummaryRow>(
      `SELECT count(*)::int AS active, min(ask_price_minor)::text AS lowest, max(ask_price_minor)::text AS highest
       FROM listings WHERE event_id = $1::numeric AND removed_at IS NULL`,
      [eventId],
    );
    return rows[0] ?? { active: 0, lowest: null, highest: null };
  }

  /**
   * What every read answer depends on besides its rows, in one round trip: the mirror generation, the
   * last completed full pass of each resource (its start is the page's `data_as_of`), the protocol
   * config (money formatting) and the events walked one by one since that listings pass (per-event
   * `data_as_of`; a few hundred rows at most: the hot set).
   */
  async state(): Promise<MirrorStateRow> {
    const rows = await this.rows<MirrorStateRow>(
      `SELECT (SELECT generation::text FROM mirror_generation) AS generation, ${EPOCH} AS epoch,
        ${lastCompletedPass('events')} AS events_pass, ${lastCompletedPass('listings')} AS listings_pass,
        (SELECT json_build_object('decimals', stablecoin_decimals, 'mint', stablecoin_mint,
           'fetched_at', fetched_at) FROM protocol_config) AS protocol,
        (SELECT json_object_agg(f.event_id::text, f.data_as_of) FROM event_freshness f
         WHERE f.data_as_of > coalesce((SELECT started_at FROM sync_passes WHERE resource = 'listings'
           AND status = 'completed' ORDER BY finished_at DESC, id DESC LIMIT 1), '-infinity')) AS event_walks`,
      [],
    );
    const row = rows[0];
    if (!row) throw new Error('mirror state query returned no row');
    return row;
  }

  /** The current mirror generation with its epoch, `<epoch>/<generation>` (the strict cache check, per request). */
  async generationKey(): Promise<string> {
    const rows = await this.rows<{ key: string }>(
      `SELECT ${EPOCH} || '/' || generation::text AS key FROM mirror_generation`,
      [],
    );
    return rows[0]?.key ?? '-/0';
  }

  /**
   * One listing as a live re-read saw it, committed like a sync page: the row changes only when its
   * price, fields or presence differ and no newer observation is already stored (`observed_at`, the same
   * stale-write guard as the sync); a change bumps `mirror_generation` and notifies it in the same
   * transaction, so every replica's response cache moves on.
   */
  applyLiveListing(observation: LiveListingObservation): Promise<LiveListingResult> {
    const key = [observation.eventId.toString(), observation.ticketId.toString()];
    return this.dataSource.transaction(async (manager) => {
      const runner = manager.queryRunner;
      if (!runner) throw new Error('transaction without a query runner');
      const run = async (text: string, values: unknown[] = []): Promise<{ g?: string }[]> =>
        ((await runner.query(text, values, true)) as QueryResult<{ g?: string }>).records;
      let changed: unknown[];
      const mapped = observation.live ? mapListing(observation.live) : null;
      if (mapped && !mapped.ok) throw new Error(`live listing not storable: ${mapped.reason}`);
      if (mapped) {
        const { askPriceMinor, raw, expiresAt } = mapped.row;
        changed = await run(
          `INSERT INTO listings AS l (event_id, ticket_id, ask_price_minor, expires_at, raw, first_seen_at,
             last_seen_at, removed_at, observed_at)
           VALUES ($1::numeric, $2::numeric, $3::numeric, $4::bigint, $5::jsonb, $6, $6, NULL, $6)
           ON CONFLICT (event_id, ticket_id) DO UPDATE SET ask_price_minor = EXCLUDED.ask_price_minor,
             expires_at = EXCLUDED.expires_at, raw = EXCLUDED.raw, last_seen_at = EXCLUDED.last_seen_at,
             removed_at = NULL, observed_at = EXCLUDED.observed_at
           WHERE l.observed_at < EXCLUDED.observed_at AND (l.removed_at IS NOT NULL
             OR l.ask_price_minor <> EXCLUDED.ask_price_minor OR l.raw <> EXCLUDED.raw
             OR l.expires_at IS DISTINCT FROM EXCLUDED.expires_at)
           RETURNING 1`,
          [
            ...key,
            askPriceMinor.toString(),
            expiresAt?.toString() ?? null,
            JSON.stringify(raw),
            observation.observedAt,
          ],
        );
      } else {
        changed = await run(
          `UPDATE listings SET removed_at = $3, observed_at = $3
           WHERE event_id = $1::numeric AND ticket_id = $2::numeric AND removed_at IS NULL AND observed_at < $3
           RETURNING 1`,
          [...key, observation.observedAt],
        );
      }
      if (changed.length === 0) {
        const [current] = await run('SELECT generation::text AS g FROM mirror_generation');
        return { changed: false, generation: BigInt(current?.g ?? '0') };
      }
      const [bumped] = await run(
        `UPDATE mirror_generation SET generation = generation + 1, changed_at = now() RETURNING generation::text AS g`,
      );
      const generation = bumped?.g ?? '0';
      await run(`SELECT pg_notify('${MIRROR_GENERATION_CHANNEL}', $1)`, [generation]);
      return { changed: true, generation: BigInt(generation) };
    });
  }
}
