import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** A watch row (table `watches`, owned by watches/), u64 values as decimal strings. */
export interface WatchRow {
  id: string;
  client_id: string;
  event_id: string;
  query: string | null;
  max_price_minor: string | null;
  min_drop_percent: number | null;
  subject: string | null;
  cooldown_seconds: number | null;
  expires_at: Date | null;
  last_alerted_at: Date | null;
  created_at: Date;
  /** `created_at` exactly (microseconds), for keyset positions. */
  created_key: string;
  /** Past its `expires_at` on the database clock: it matches nothing any more. */
  expired: boolean;
}

export interface NewWatch {
  clientId: string;
  eventId: bigint;
  query: string | null;
  maxPriceMinor: bigint | null;
  minDropPercent: number | null;
  subject: string | null;
  cooldownSeconds: number | null;
  expiresAt: string | null;
}

/** Why a watch was not inserted (the service turns each into its 4xx). */
export type CreateRefusal = 'expires_in_past' | 'expires_too_far' | 'cap';

export interface WatchFilters {
  subject?: string;
  eventId?: bigint;
}

/**
 * `last_alerted_at` is the watch's latest alert (`watch_alerts`, through its primary key, which starts with the
 * watch): the match keeps the column on `watches` only for a watch with a cooldown, the one reader of it
 * (migrations/…-WatchMatchCooldownOnlyTouch.ts); both are the alerting transaction's `now()`.
 */
const COLUMNS = `id, client_id, event_id::text AS event_id, query, max_price_minor::text AS max_price_minor,
  min_drop_percent, subject, cooldown_seconds, expires_at,
  (SELECT max(a.alerted_at) FROM watch_alerts a WHERE a.watch_id = watches.id) AS last_alerted_at, created_at,
  created_at::text AS created_key, (expires_at IS NOT NULL AND expires_at <= now()) AS expired`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `id` can be a watch id at all (a malformed one is the same 404 as an unknown one). */
export function isWatchId(id: string): boolean {
  return UUID.test(id);
}

/** Watches, always read and written under their owner's client id (another client's watch is not there). */
@Injectable()
export class WatchRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Inserts unless `expires_at` is not in the future or further than `maxDays` ahead (database clock), or the
   * client has `max` unexpired watches already. Creations of one client are serialised by a transaction-scoped
   * advisory lock, so concurrent requests cannot overshoot the cap.
   */
  async create(input: NewWatch, max: number, maxDays: number): Promise<WatchRow | CreateRefusal> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query(`SELECT pg_advisory_xact_lock(hashtextextended('watches:' || $1::text, 0))`, [
        input.clientId,
      ]);
      const [check] = await manager.query<{ past: boolean; far: boolean; full: boolean }[]>(
        `SELECT coalesce($2::timestamptz <= now(), false) AS past,
                coalesce($2::timestamptz > now() + make_interval(days => $3::int), false) AS far,
                (SELECT count(*) FROM watches
                 WHERE client_id = $1::uuid AND (expires_at IS NULL OR expires_at > now())) >= $4::int AS full`,
        [input.clientId, input.expiresAt, maxDays, max],
      );
      if (check?.past) return 'expires_in_past';
      if (check?.far) return 'expires_too_far';
      if (check?.full) return 'cap';
      const rows = await manager.query<WatchRow[]>(
        `INSERT INTO watches (client_id, event_id, query, max_price_minor, min_drop_percent, subject,
           cooldown_seconds, expires_at)
         VALUES ($1::uuid, $2::numeric, $3, $4::numeric, $5::smallint, $6, $7::int, $8::timestamptz)
         RETURNING ${COLUMNS}`,
        [
          input.clientId,
          input.eventId.toString(),
          input.query,
          input.maxPriceMinor?.toString() ?? null,
          input.minDropPercent,
          input.subject,
          input.cooldownSeconds,
          input.expiresAt,
        ],
      );
      const row = rows[0];
      if (!row) throw new Error('watch not inserted');
      return row;
    });
  }

  async get(clientId: string, id: string): Promise<WatchRow | null> {
    if (!isWatchId(id)) return null;
    const rows = await this.dataSource.query<WatchRow[]>(
      `SELECT ${COLUMNS} FROM watches WHERE id = $1::uuid AND client_id = $2::uuid`,
      [id, clientId],
    );
    return rows[0] ?? null;
  }

  /** Newest first, `limit + 1` rows after the keyset position (created_at, id), filtered. */
  async page(
    clientId: string,
    limit: number,
    after: [string, string] | null,
    filters: WatchFilters,
  ): Promise<WatchRow[]> {
    return this.dataSource.query<WatchRow[]>(
      `SELECT ${COLUMNS} FROM watches
       WHERE client_id = $1::uuid AND ($2::timestamptz IS NULL OR (created_at, id) < ($2::timestamptz, $3::uuid))
         AND ($5::text IS NULL OR subject = $5) AND ($6::numeric IS NULL OR event_id = $6::numeric)
       ORDER BY created_at DESC, id DESC LIMIT $4`,
      [
        clientId,
        after?.[0] ?? null,
        after?.[1] ?? null,
        limit + 1,
        filters.subject ?? null,
        filters.eventId?.toString() ?? null,
      ],
    );
  }

  /** Deletes the watch and what it alerted (a statement trigger on `watches`); false when the client has no such watch. */
  async delete(clientId: string, id: string): Promise<boolean> {
    if (!isWatchId(id)) return false;
    const rows = await this.dataSource.query<[unknown[], number] | unknown[]>(
      `DELETE FROM watches WHERE id = $1::uuid AND client_id = $2::uuid RETURNING id`,
      [id, clientId],
    );
    const [first] = rows;
    return Array.isArray(first) ? first.length > 0 : first !== undefined;
  }
}
