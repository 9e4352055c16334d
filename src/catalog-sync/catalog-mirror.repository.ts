import { Injectable } from '@nestjs/common';
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
import { mapListing } from './catalog-sync.mapper';
import { MIRROR_GENERATION_CHANNEL } from './mirror-generation.listener';

// Exact sort keys of timestamps: microseconds survive the round trip through a cursor (a JS Date would not).
const TS_KEY = (column: string): string =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

const LISTING_COLUMNS = `event_id::text AS event_id, ticket_id::text AS ticket_id,
  ask_price_minor::text AS ask_price_minor, expires_at::text AS expires_at, raw,
  first_seen_at, last_seen_at, removed_at, ${TS_KEY('first_seen_at')} AS first_seen_key`;

const EVENT_COLUMNS = `event_id::text AS event_id, name, start_at_raw, start_at, ${TS_KEY('start_at')} AS start_key,
  first_seen_at, last_seen_at, removed_at`;

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
 * The read side of the mirror in hand-written SQL (the hot paths of the marketplace's pages): keyset pages
 * on the partial indexes of `events`/`listings`, never OFFSET. Runs on the TypeORM data source's own pg pool:
 * one round trip per page, no entity hydration (the rows go straight to the read API's mapper).
 */
@Injectable()
export class CatalogMirrorRepository {
  private readonly pool: Pool;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.pool = (dataSource.driver as unknown as { master: Pool }).master;
  }

  private async rows<T extends QueryResultRow>(text: string, values: unknown[]): Promise<T[]> {
    return (await this.pool.query<T>(text, values)).rows;
  }

  /**
   * One page (limit + 1 rows) of active listings, of one event or all, in the requested order, after the
   * keyset position `after` ([price or first-seen key, event_id, ticket_id]).
   */
  listingsPage(query: ListingsQuery): Promise<ListingRow[]> {
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
    return this.rows<ListingRow>(text, p.values);
  }

  /** One listing, active or removed (the read API tells the two apart); undefined when never mirrored. */
  async listing(eventId: string, ticketId: string): Promise<ListingRow | undefined> {
    const rows = await this.rows<ListingRow>(
      `SELECT ${LISTING_COLUMNS} FROM listings WHERE event_id = $1::numeric AND ticket_id = $2::numeric`,
      [eventId, ticketId],
    );
    return rows[0];
  }

  /**
   * One page (limit + 1 rows) of events ordered by (start_at, event_id), events whose start could not be
   * parsed last (NULLS LAST, as the index). Two index range scans glued in order instead of an OR, so
   * each stays an index scan.
   */
  eventsPage(query: EventsQuery): Promise<EventRow[]> {
    const p = new Params();
    const where = ['removed_at IS NULL'];
    if (query.nameContains !== undefined) {
      const pattern = `%${query.nameContains.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      where.push(`lower(name) LIKE ${p.add(pattern, 'text')}`);
    }
    const limit = p.add(query.limit + 1, 'int');
    const dated = [...where, 'start_at IS NOT NULL'];
    if (query.startsAfter !== undefined) dated.push(`start_at > ${p.add(query.startsAfter, 'timestamptz')}`);
    if (query.startsBefore !== undefined)
      dated.push(`start_at < ${p.add(query.startsBefore, 'timestamptz')}`);
    const undated = [...where, 'start_at IS NULL'];
    const [afterKey, afterId] = query.after ?? [];
    let includeDated = true;
    if (query.after && afterKey !== null && afterKey !== undefined) {
      dated.push(
        `(start_at, event_id) > (${p.add(afterKey, 'timestamptz')}, ${p.add(afterId ?? '0', 'numeric')})`,
      );
    } else if (query.after) {
      includeDated = false;
      undated.push(`event_id > ${p.add(afterId ?? '0', 'numeric')}`);
    }
    // A time window excludes the events without a parsed start.
    const includeUndated = query.startsAfter === undefined && query.startsBefore === undefined;
    const parts: string[] = [];
    if (includeDated) {
      parts.push(`(SELECT ${EVENT_COLUMNS} FROM events WHERE ${dated.join(' AND ')}
        ORDER BY events.start_at, events.event_id LIMIT ${limit})`);
    }
    if (includeUndated) {
      parts.push(`(SELECT ${EVENT_COLUMNS} FROM events WHERE ${undated.join(' AND ')}
        ORDER BY events.event_id LIMIT ${limit})`);
    }
    if (parts.length === 0) return Promise.resolve([]);
    const text = `SELECT * FROM (${parts.join(' UNION ALL ')}) page
      ORDER BY start_at ASC NULLS LAST, event_id::numeric ASC LIMIT ${limit}`;
    return this.rows<EventRow>(text, p.values);
  }

  /** One event, active or removed; undefined when never mirrored. */
  async event(eventId: string): Promise<EventRow | undefined> {
    const rows = await this.rows<EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM events WHERE event_id = $1::numeric`,
      [eventId],
    );
    return rows[0];
  }

  /** Active listing count and the lowest and highest ask of one event (index-only over the price index). */
  async listingSummary(eventId: string): Promise<ListingSummaryRow> {
    const rows = await this.rows<ListingSummaryRow>(
      `SELECT count(*)::int AS active, min(ask_price_minor)::text AS lowest, max(ask_price_minor)::text AS highest
       FROM listings WHERE event_id = $1::numeric AND removed_at IS NULL`,
      [eventId],
    );
    return rows[0] ?? { active: 0, lowest: null, highest: null };
  }

  /**
   * What every read answer depends on besides its rows, in one round trip: the mirror generation, the
   * last completed full pass of each resource (its start is the page's `data_as_of`) and the protocol
   * config (money formatting).
   */
  async state(): Promise<MirrorStateRow> {
    const rows = await this.rows<MirrorStateRow>(
      `SELECT (SELECT generation::text FROM mirror_generation) AS generation,
        ${lastCompletedPass('events')} AS events_pass, ${lastCompletedPass('listings')} AS listings_pass,
        (SELECT json_build_object('decimals', stablecoin_decimals, 'mint', stablecoin_mint,
           'fetched_at', fetched_at) FROM protocol_config) AS protocol`,
      [],
    );
    const row = rows[0];
    if (!row) throw new Error('mirror state query returned no row');
    return row;
  }

  /** The current mirror generation alone (the strict cache check reads it per request). */
  async generation(): Promise<string> {
    const rows = await this.rows<{ generation: string }>(
      'SELECT generation::text AS generation FROM mirror_generation',
      [],
    );
    return rows[0]?.generation ?? '0';
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
