import { Pool, type PoolClient } from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { mapListing, type ListingRow } from '../../src/catalog-sync/catalog-sync.mapper';
import { EventDemandRepository } from '../../src/catalog-sync/event-demand.repository';
import { EventFreshnessRepository } from '../../src/catalog-sync/event-freshness.repository';
import { ListingRepository } from '../../src/catalog-sync/listing.repository';
import { createDatabaseFromTemplate, dropDatabase } from '../support/test-database';

/** Instants of the simulated timeline (seconds); the database's own clock is not involved. */
const at = (s: number): Date => new Date(Date.UTC(2026, 0, 1, 0, 0, s));

const EVENT = 8n;
const OTHER = 9n;

function row(eventId: bigint, ticketId: bigint, price: bigint): ListingRow {
  const mapped = mapListing({ eventId, ticketId, askPriceMinor: price, raw: { seller: 'S1' } });
  if (!mapped.ok) throw new Error('unmappable fixture');
  return mapped.row;
}

type Upstream = Map<string, bigint>; // "event:ticket" -> price
const rowsOf = (u: Upstream, only?: bigint): ListingRow[] =>
  [...u]
    .map(([key, price]) => {
      const [e, t] = key.split(':').map(BigInt);
      return row(e, t, price);
    })
    .filter((r) => only === undefined || r.eventId === only);

/** Upstream rows as "event:ticket=price", sorted. */
const expected = (u: Upstream): string[] => [...u].map(([k, p]) => `${k}=${p}`).sort();

/** The positions of the two reads (each pass's second step) in an interleaving. */
function readIndexes(order: readonly ('F' | 'E')[]): number[] {
  const seen = { F: 0, E: 0 };
  const out: number[] = [];
  order.forEach((who, i) => {
    if (++seen[who] === 2) out.push(i);
  });
  return out;
}

/** The interleavings of two 4-step sequences (start, read, write, complete): 70 of them. */
function interleavings(): ('F' | 'E')[][] {
  const out: ('F' | 'E')[][] = [];
  const go = (f: number, e: number, acc: ('F' | 'E')[]): void => {
    if (f === 4 && e === 4) return void out.push(acc);
    if (f < 4) go(f + 1, e, [...acc, 'F']);
    if (e < 4) go(f, e + 1, [...acc, 'E']);
  };
  go(0, 0, []);
  return out;
}

/** One pass of the simulation: a full listings pass or one walk of EVENT, each on its own connection. */
interface SimPass {
  kind: 'full' | 'event';
  id: string;
  db: PoolClient;
  startedAt?: Date;
  snapshot?: ListingRow[];
  readAt?: Date;
}

describe('live catalog: per-event walks and full passes on real PostgreSQL', () => {
  const adminUrl = inject('databaseAdminUrl');
  let url: string;
  let pool: Pool;
  const listings = new ListingRepository();
  let freshness: EventFreshnessRepository;
  let nextPassId = 1000;

  beforeAll(async () => {
    url = await createDatabaseFromTemplate(adminUrl);
    pool = new Pool({ connectionString: url, max: 6 });
    freshness = new EventFreshnessRepository(pool);
  });
  afterAll(async () => {
    await pool?.end();
    await dropDatabase(adminUrl, url);
  });

  const reset = async (initial: Upstream): Promise<void> => {
    await pool.query('TRUNCATE listings, sync_passes, event_freshness, event_demand');
    const c = await pool.connect();
    try {
      await listings.prepareSeen(c);
      await listings.upsertPage(c, rowsOf(initial), at(0), '1');
    } finally {
      await listings.dropSeen(c);
      c.release();
    }
  };

  const start = async (pass: SimPass, t: number): Promise<void> => {
    pass.startedAt = at(t);
    await listings.prepareSeen(pass.db);
    await pool.query(
      `INSERT INTO sync_passes (resource, scope_event_id, status, trigger, holder, fencing_token, started_at)
       OVERRIDING SYSTEM VALUE VALUES ($1, $2, 'running', 'test', 'sim', 1, $3) RETURNING id`,
      [
        pass.kind === 'full' ? 'listings' : 'event_listings',
        pass.kind === 'full' ? null : '8',
        pass.startedAt,
      ],
    );
  };
  const complete = async (pass: SimPass): Promise<void> => {
    const scope = pass.kind === 'full' ? null : EVENT;
    await pass.db.query('BEGIN');
    await listings.sweep(pass.db, pass.startedAt as Date, pass.id, scope);
    if (scope !== null) await freshness.record(pass.db, scope, pass.startedAt as Date, pass.id, 1);
    await pass.db.query(
      `UPDATE sync_passes SET status = 'completed', finished_at = clock_timestamp()
       WHERE status = 'running' AND resource = $1 AND started_at = $2`,
      [pass.kind === 'full' ? 'listings' : 'event_listings', pass.startedAt],
    );
    await pass.db.query('COMMIT');
  };
  const write = async (pass: SimPass): Promise<void> => {
    await pass.db.query('BEGIN');
    await listings.upsertPage(pass.db, pass.snapshot ?? [], pass.readAt as Date, pass.id);
    await pass.db.query('COMMIT');
  };

  /** Active mirror rows as "event:ticket=price". */
  const mirror = async (): Promise<string[]> =>
    (
      await pool.query<{ k: string }>(
        `SELECT event_id::text || ':' || ticket_id::text || '=' || ask_price_minor::text AS k
         FROM listings WHERE removed_at IS NULL ORDER BY 1`,
      )
    ).rows.map((r) => r.k);
  it(
    'every interleaving of a per-event walk and a full pass, with the upstream changing at any step: the ' +
      'newest read wins where both read after the change, and the next complete walk makes the mirror exact',
    { timeout: 240_000 },
    async () => {
      const orders = interleavings();
      expect(orders).toHaveLength(70);
      const a = await pool.connect();
      const b = await pool.connect();
      const c = await pool.connect();
      let checked = 0;
      const failures: string[] = [];
      try {
        for (const order of orders) {
          // The change matters only relative to the two reads: before both, between them, after both.
          const readSteps = readIndexes(order);
          for (const mutateAt of [readSteps[0], readSteps[1], order.length]) {
            const upstream: Upstream = new Map([
              ['8:1', 100n],
              ['8:2', 200n],
              ['9:1', 100n],
              ['9:2', 100n],
            ]);
            const initial = new Map(upstream);
            await reset(upstream);
            const full: SimPass = { kind: 'full', id: String(nextPassId++), db: a };
            const walk: SimPass = { kind: 'event', id: String(nextPassId++), db: b };
            const steps = { F: 0, E: 0 };
            const reads: number[] = [];
            for (let i = 0; i <= order.length; i++) {
              const t = 10 + i;
              if (i === mutateAt) {
                // Sold, repriced, newly listed on the busy event; sold on the other one.
                upstream.delete('8:1');
                upstream.set('8:2', 250n);
                upstream.set('8:3', 300n);
                upstream.delete('9:2');
              }
              if (i === order.length) break;
              const who = order[i];
              const pass = who === 'F' ? full : walk;
              const step = steps[who]++;
              if (step === 0) await start(pass, t);
              else if (step === 1) {
                pass.readAt = at(t);
                pass.snapshot = rowsOf(upstream, pass.kind === 'event' ? EVENT : undefined);
                reads.push(i);
              } else if (step === 2) await write(pass);
              else await complete(pass);
            }
            const context = `order ${order.join('')} change before step ${mutateAt}`;
            const now = (await mirror()).join(' ');
            // Both read after the change: the mirror is exact as soon as both completed.
            if (reads.every((r) => r > mutateAt) && now !== expected(upstream).join(' '))
              failures.push(`${context}: after both completed ${now}`);
            // Both read before the change: the mirror is what both read (nothing observed the change yet).
            if (reads.every((r) => r < mutateAt) && now !== expected(initial).join(' '))
              failures.push(`${context}: after both completed ${now}`);
            // The next complete walk of the event, then of everything: exact (sync:verify's comparison).
            const next: SimPass = { kind: 'event', id: String(nextPassId++), db: c };
            await start(next, 100);
            next.readAt = at(100);
            next.snapshot = rowsOf(upstream, EVENT);
            await write(next);
            await complete(next);
            const active = (await mirror()).filter((k) => k.startsWith('8:')).join(' ');
            const exact = expected(upstream)
              .filter((k) => k.startsWith('8:'))
              .join(' ');
            if (active !== exact) failures.push(`${context}: after the next walk ${active}`);
            checked++;
          }
        }
      } finally {
        for (const conn of [a, b, c]) {
          await listings.dropSeen(conn).catch(() => undefined);
          conn.release();
        }
      }
      expect(failures).toEqual([]);
      expect(checked).toBe(70 * 3);
    },
  );

  it('a full pass never removes a row of an event that a per-event walk started after it completed or is walking', async () => {
    const upstream: Upstream = new Map([
      ['8:1', 100n],
      ['8:2', 100n],
      ['9:1', 100n],
      ['9:2', 100n],
    ]);
    await reset(upstream);
    const a = await pool.connect();
    try {
      // The full pass (t=10) sees only 8:1 and 9:1 ...
      await listings.prepareSeen(a);
      await listings.upsertPage(a, [row(EVENT, 1n, 100n), row(OTHER, 1n, 100n)], at(10), '50');
      // ... while a walk of event 8 that started at t=12 saw 8:2 unchanged (so wrote nothing) and completed.
      await freshness.record(pool, EVENT, at(12), '51', 1);
      expect(await listings.sweep(a, at(10), '50', null)).toBe(1);
      expect(await mirror()).toEqual(['8:1=100', '8:2=100', '9:1=100']);
      // A walk still running that started after the full pass holds its event the same way.
      await pool.query('TRUNCATE event_freshness');
      await pool.query(
        `INSERT INTO sync_passes (resource, scope_event_id, status, trigger, holder, fencing_token, started_at)
         VALUES ('event_listings', 8, 'running', 'test', 'sim', 1, $1)`,
        [at(12)],
      );
      await listings.prepareSeen(a);
      await listings.upsertPage(a, [row(EVENT, 1n, 100n)], at(10), '52');
      // (9:1, unseen, goes; 8:2 stays.)
      expect(await listings.sweep(a, at(10), '52', null)).toBe(1);
      expect(await mirror()).toEqual(['8:1=100', '8:2=100']);
      // One that started before the full pass does not.
      await listings.prepareSeen(a);
      await listings.upsertPage(a, [row(EVENT, 1n, 100n)], at(13), '53');
      expect(await listings.sweep(a, at(13), '53', null)).toBe(1);
      expect(await mirror()).toEqual(['8:1=100']);
    } finally {
      await listings.dropSeen(a).catch(() => undefined);
      a.release();
    }
  });

  it("an event's data_as_of never moves back: an older walk completing late leaves the newer walk's instant", async () => {
    await pool.query('TRUNCATE event_freshness');
    await freshness.record(pool, EVENT, at(20), '60', 2);
    await freshness.record(pool, EVENT, at(15), '61', 5);
    const { rows } = await pool.query<{ as_of: Date; pass_id: string; pages: number }>(
      `SELECT data_as_of AS as_of, pass_id::text, pages FROM event_freshness WHERE event_id = 8`,
    );
    expect(rows).toEqual([{ as_of: at(20), pass_id: '60', pages: 2 }]);
  });

  it('demand: counts from several replicas add up, decay with the half-life, and make the hot set', async () => {
    await pool.query('TRUNCATE event_demand, events, sync_passes, event_freshness');
    const demand = new EventDemandRepository(pool);
    await demand.add(new Map([['8', 3]]), 60_000);
    await demand.add(
      new Map([
        ['8', 2],
        ['9', 0.2],
      ]),
      60_000,
    );
    // An old row: its score has decayed by 2^-10.
    await pool.query(
      `INSERT INTO event_demand (event_id, score, updated_at) VALUES (10, 1000, now() - interval '600 seconds')`,
    );
    await freshness.record(pool, EVENT, at(30), '70', 3);
    const hot = await demand.hotSet({ halfLifeMs: 60_000, threshold: 0.5, startsWithinMs: 0, limit: 10 });
    expect(hot.map((h) => h.eventId)).toEqual(['8', '10']);
    expect(hot[0].score).toBeCloseTo(5, 1);
    expect(hot[0].asOfMs).toBe(at(30).getTime());
    expect(hot[0].pages).toBe(3);
    expect(hot[1].score).toBeCloseTo(1000 / 1024, 1);
    expect(hot[1].asOfMs).toBeNull();
    expect(await demand.prune(300_000)).toBe(1);
  });
});
