import { Client } from 'pg';

export interface SeedEvent {
  eventId: string;
  name?: string;
  /** RFC 3339 or anything else (then start_at is NULL). */
  startAt?: string | null;
  removed?: boolean;
}

export interface SeedListing {
  eventId: string;
  ticketId: string;
  price: string;
  firstSeenAt?: Date;
  removed?: boolean;
  raw?: Record<string, unknown>;
}

const SEEN = new Date('2026-06-01T00:00:00.000Z');

/**
 * Writes the mirror tables directly, as catalog-sync's commits would (tests of the read side only):
 * every change bumps `mirror_generation` and notifies it in the same transaction, like a sync page.
 */
export class MirrorSeeder {
  private constructor(private readonly client: Client) {}

  static async connect(url: string): Promise<MirrorSeeder> {
    const client = new Client({ connectionString: url });
    await client.connect();
    return new MirrorSeeder(client);
  }

  async close(): Promise<void> {
    await this.client.end();
  }

  /** Runs `fn` in one transaction that also bumps and notifies the generation. */
  async commit(fn: () => Promise<void>): Promise<void> {
    await this.client.query('BEGIN');
    try {
      await fn();
      const { rows } = await this.client.query<{ g: string }>(
        'UPDATE mirror_generation SET generation = generation + 1, changed_at = now() RETURNING generation::text AS g',
      );
      await this.client.query(`SELECT pg_notify('mirror_generation', $1)`, [rows[0]?.g ?? '0']);
      await this.client.query('COMMIT');
    } catch (error) {
      await this.client.query('ROLLBACK');
      throw error;
    }
  }

  async reset(): Promise<void> {
    await this.commit(async () => {
      await this.client.query('TRUNCATE events, listings, sync_passes, protocol_config');
    });
  }

  async events(events: readonly SeedEvent[]): Promise<void> {
    await this.commit(async () => {
      for (const e of events) {
        const startRaw = e.startAt ?? 'to be announced';
        const parsed = e.startAt && !Number.isNaN(Date.parse(e.startAt)) ? e.startAt : null;
        await this.client.query(
          `INSERT INTO events (event_id, name, start_at_raw, start_at, raw, first_seen_at, last_seen_at, removed_at, observed_at)
           VALUES ($1, $2, $3, $4, $5, $6, $6, $7, $6)
           ON CONFLICT (event_id) DO UPDATE SET name = EXCLUDED.name, removed_at = EXCLUDED.removed_at`,
          [
            e.eventId,
            e.name ?? `Event ${e.eventId}`,
            startRaw,
            parsed,
            JSON.stringify({ event_id: e.eventId, name: e.name ?? `Event ${e.eventId}`, start_at: startRaw }),
            SEEN,
            e.removed ? SEEN : null,
          ],
        );
      }
    });
  }

  async listings(listings: readonly SeedListing[]): Promise<void> {
    await this.commit(async () => {
      for (const l of listings) {
        const raw = l.raw ?? {
          event_id: l.eventId,
          ticket_id: l.ticketId,
          ask_price_minor: l.price,
          seller: `seller-${l.ticketId}`,
        };
        await this.client.query(
          `INSERT INTO listings (event_id, ticket_id, ask_price_minor, expires_at, raw, first_seen_at, last_seen_at,
             removed_at, observed_at)
           VALUES ($1, $2, $3, NULL, $4, $5, $5, $6, $5)
           ON CONFLICT (event_id, ticket_id) DO UPDATE SET ask_price_minor = EXCLUDED.ask_price_minor,
             removed_at = EXCLUDED.removed_at, raw = EXCLUDED.raw`,
          [
            l.eventId,
            l.ticketId,
            l.price,
            JSON.stringify(raw),
            l.firstSeenAt ?? SEEN,
            l.removed ? SEEN : null,
          ],
        );
      }
    });
  }

  async removeListings(keys: readonly { eventId: string; ticketId: string }[]): Promise<void> {
    await this.commit(async () => {
      for (const k of keys) {
        await this.client.query(
          'UPDATE listings SET removed_at = now() WHERE event_id = $1 AND ticket_id = $2 AND removed_at IS NULL',
          [k.eventId, k.ticketId],
        );
      }
    });
  }

  async protocolConfig(decimals: number, mint: string | null): Promise<void> {
    await this.commit(async () => {
      await this.client.query(
        `INSERT INTO protocol_config (stablecoin_decimals, stablecoin_mint, raw, fetched_at) VALUES ($1, $2, '{}', now())
         ON CONFLICT (id) DO UPDATE SET stablecoin_decimals = EXCLUDED.stablecoin_decimals,
           stablecoin_mint = EXCLUDED.stablecoin_mint, fetched_at = EXCLUDED.fetched_at`,
        [decimals, mint],
      );
    });
  }

  /** A completed full pass of `resource` that started at `startedAt`. */
  async completedPass(resource: 'events' | 'listings', startedAt: Date): Promise<void> {
    await this.commit(async () => {
      await this.client.query(
        `INSERT INTO sync_passes (resource, status, started_at, finished_at, holder, fencing_token)
         VALUES ($1, 'completed', $2, $2::timestamptz + interval '1 second', 'test', 1)`,
        [resource, startedAt],
      );
    });
  }

  async listingRow(eventId: string, ticketId: string): Promise<Record<string, unknown> | undefined> {
    const { rows } = await this.client.query(
      `SELECT ask_price_minor::text AS price, removed_at, raw FROM listings WHERE event_id = $1 AND ticket_id = $2`,
      [eventId, ticketId],
    );
    return rows[0] as Record<string, unknown> | undefined;
  }
}
