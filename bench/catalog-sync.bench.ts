import 'reflect-metadata';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { Pool, type PoolClient } from 'pg';
import pino from 'pino';
import { SyncMetrics } from '../src/catalog-sync/catalog-sync.metrics';
import { EventFreshnessRepository } from '../src/catalog-sync/event-freshness.repository';
import { EventRepository } from '../src/catalog-sync/event.repository';
import { ListingRepository } from '../src/catalog-sync/listing.repository';
import { MirrorGenerationRepository } from '../src/catalog-sync/mirror-generation.repository';
import { copyFrom, copyText } from '../src/catalog-sync/pg-copy';
import { nullableBigintArray, numericArray, textArray } from '../src/catalog-sync/sql';
import { SyncPassRunner } from '../src/catalog-sync/sync-pass.runner';
import { SyncPassRepository, type SyncPassRecord } from '../src/catalog-sync/sync-pass.repository';
import { heapLimitMb, SERVICE_NODE_FLAGS, startedWithoutHeapLimit } from '../src/common/node-flags';
import { SyncConfig } from '../src/config/sync.config';
import { createDataSource } from '../src/database/data-source';
import { NamedLeaseRepository } from '../src/durable-work/named-lease.repository';
import { startEmbeddedPostgres, type RunningPostgres } from '../src/database/embedded-postgres';
import { httpGet, walkListingsRaw } from './sandbox-walk';
import { UpstreamClient } from '../src/upstream/upstream.client';
import { walkStaticPages } from './http-walk';
import { perMillion, tableSizes } from './db-size';
import { printPgStats } from './pg-stats';
import type { BenchReport } from './report';

const PAGE_SIZE = 1000;
const fmt = (n: number): string => Math.round(n).toLocaleString('en');
const mb = (n: number): string => (n / 1048576).toFixed(0);

/** The standalone sandbox as its own process, so its dataset does not count in the sync's RSS. */
async function spawnSandbox(listings: number): Promise<{ child: ChildProcess; url: string; apiKey: string }> {
  const apiKey = 'trk_test_sandbox_full_access_0000000000000001';
  const child = spawn(process.execPath, ['dist/src/sandbox/sandbox.main.js'], {
    env: {
      PATH: process.env.PATH ?? '',
      SANDBOX_PORT: '0',
      SANDBOX_SEED: 'bench',
      SANDBOX_EVENTS: '5000',
      SANDBOX_LISTINGS: String(listings),
      SANDBOX_API_KEY: apiKey,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`sandbox did not start:\n${out}`)), 300_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`sandbox exited with ${code}:\n${out}`)));
  });
  return { child, url, apiKey };
}

async function database(): Promise<{ url: string; stop: () => Promise<void> }> {
  if (process.env.BENCH_DATABASE_URL) return { url: process.env.BENCH_DATABASE_URL, stop: async () => {} };
  const dir = await mkdtemp(join(tmpdir(), 'bff-bench-pg-'));
  const { chmod } = await import('node:fs/promises');
  await chmod(dir, 0o755);
  const pg: RunningPostgres = await startEmbeddedPostgres({
    dataDir: join(dir, 'cluster'),
    settings: {
      fsync: 'off',
      synchronous_commit: 'off',
      full_page_writes: 'off',
      // BENCH_PG_SHARED_BUFFERS=1GB (an experiment, printed as such): the cluster's buffer cache, PostgreSQL's
      // initdb default 128MB otherwise (the pass and the baselines alike).
      ...(process.env.BENCH_PG_SHARED_BUFFERS ? { shared_buffers: process.env.BENCH_PG_SHARED_BUFFERS } : {}),
      // BENCH_PG_STATS=1: where the catalog passes' database time goes (bench/pg-stats.ts).
      ...(process.env.BENCH_PG_STATS === '1'
        ? { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'all' }
        : {}),
    },
  });
  const admin = new Pool({ connectionString: pg.url, max: 1 });
  await admin.query('CREATE DATABASE bff_bench');
  await admin.end();
  const url = pg.url.replace(/\/[^/]*$/, '/bff_bench');
  const ds = createDataSource({ url, poolSize: 1 });
  await ds.initialize();
  await ds.runMigrations({ transaction: 'each' });
  await ds.destroy();
  return {
    url,
    stop: async () => {
      await pg.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * N price watches (docs/watches.md) of one client over the mirror's events, round-robin: half alert on a drop of
 * BENCH_SYNC_WATCH_DROP_PERCENT (10: every changed row of their event matches; 30: none does, the join and the
 * checks still run), half on a listing under a max price no changed row crosses.
 */
async function seedWatches(pool: Pool, count: number, clientId?: string): Promise<void> {
  const [client] = clientId
    ? [{ id: clientId }]
    : (
        await pool.query<{ id: string }>(
          `INSERT INTO api_clients (name, key_prefix, key_hash, scopes)
           VALUES ('bench-watcher', 'trb_live_bench000002', sha256('bench'), ARRAY['watches:write']) RETURNING id`,
        )
      ).rows;
  await pool.query(
    `WITH ev AS (SELECT array_agg(DISTINCT event_id) AS ids FROM listings)
     INSERT INTO watches (client_id, event_id, max_price_minor, min_drop_percent)
     SELECT $1::uuid, ids[1 + g % cardinality(ids)], CASE WHEN g % 2 = 0 THEN 1 END, CASE WHEN g % 2 = 1 THEN $3::int END
     FROM ev, generate_series(1, $2::int) g`,
    [client?.id, count, Number(process.env.BENCH_SYNC_WATCH_DROP_PERCENT ?? 10)],
  );
  await pool.query('ANALYZE watches');
}

async function watchMatches(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox_events WHERE type = 'watch.matched'`,
  );
  return rows[0]?.n ?? 0;
}

/** Runs one listings pass through the real runner; samples this process's RSS while it runs. */
async function syncPass(
  pool: Pool,
  upstream: UpstreamClient,
): Promise<{ pass: SyncPassRecord; seconds: number; peakRssMb: number; stages: string; memory: string }> {
  const config = Object.assign(new SyncConfig(), {
    SYNC_PAGE_SIZE: PAGE_SIZE,
    SYNC_PROGRESS_LOG_MS: 600_000,
    ...(process.env.BENCH_SYNC_BATCH_ROWS
      ? { SYNC_WRITE_BATCH_ROWS: Number(process.env.BENCH_SYNC_BATCH_ROWS) }
      : {}),
  });
  let stages = '';
  const quiet = {
    info: (o: object, m: string) => {
      if (m === 'sync pass completed')
        stages = JSON.stringify((o as { stageSeconds?: unknown }).stageSeconds);
    },
    warn: () => {},
    error: (o: object, m: string) => console.error(m, o),
  };
  (globalThis as { gc?: () => void }).gc?.();
  const before = process.memoryUsage();
  let peak = before.rss;
  let peakHeap = before.heapTotal;
  let peakExternal = before.external + before.arrayBuffers;
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    peak = Math.max(peak, m.rss);
    peakHeap = Math.max(peakHeap, m.heapTotal);
    peakExternal = Math.max(peakExternal, m.external + m.arrayBuffers);
  }, 50);
  const started = process.hrtime.bigint();
  // Built by hand (no Nest container): the same collaborators CatalogSyncModule provides, a quiet logger.
  const runner = new SyncPassRunner(
    pool,
    upstream,
    config,
    new NamedLeaseRepository(pool),
    new SyncPassRepository(pool),
    new EventRepository(),
    new ListingRepository(),
    new MirrorGenerationRepository(pool),
    new SyncMetrics(),
    quiet,
    'bench',
    new EventFreshnessRepository(pool),
  );
  const result = await runner.start({ resource: 'listings', scopeEventId: null, trigger: 'operator' });
  if (!result.started) throw new Error('lease busy');
  const pass = await result.done;
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  if (pass.status !== 'completed') throw new Error(`sync pass ${pass.status}: ${pass.error}`);
  const memory = `rss ${mb(before.rss)} before → ${mb(peak)} peak; V8 heap ${mb(before.heapTotal)} → ${mb(peakHeap)}; external ${mb(peakExternal)}`;
  return { pass, seconds, peakRssMb: peak / 1024 / 1024, stages, memory };
}

/** The cluster's buffer cache, and whether BENCH_PG_SHARED_BUFFERS set it (an experiment, not the default). */
async function sharedBuffers(pool: Pool): Promise<string> {
  const { rows } = await pool.query<{ shared_buffers: string }>('SHOW shared_buffers');
  const value = rows[0].shared_buffers;
  return process.env.BENCH_PG_SHARED_BUFFERS ? `${value} (BENCH_PG_SHARED_BUFFERS: NOT the default)` : value;
}

/** This process's heap limit, and whether it was started as the service is (`npm run bench` passes its flags). */
function heapLimitText(): string {
  const limit = heapLimitMb();
  return startedWithoutHeapLimit(limit)
    ? `${fmt(limit)} (NOT the service's: run it with ${SERVICE_NODE_FLAGS.join(' ')}, as npm run bench does)`
    : `${fmt(limit)} (${SERVICE_NODE_FLAGS.join(' ')}, as npm start)`;
}

interface MirrorPage {
  e: string[];
  t: string[];
  p: string[];
  x: (string | null)[];
  raw: string[];
}

/**
 * The order a baseline loads the mirror's rows in: `key`, the primary key's (so its index writes are mostly
 * appends: the baseline issue 34's target is measured against), or `upstream`, the order the upstream served them.
 */
type RowOrder = 'key' | 'upstream';

type MirrorRow = { e: string; t: string; p: string; x: string | null; raw: string };
const MIRROR_COLUMNS = `event_id::text AS e, ticket_id::text AS t, ask_price_minor::text AS p,
  expires_at::text AS x, raw::text AS raw`;

const mirrorPage = (rows: MirrorRow[]): MirrorPage => ({
  e: rows.map((r) => r.e),
  t: rows.map((r) => r.t),
  p: rows.map((r) => r.p),
  x: rows.map((r) => r.x),
  raw: rows.map((r) => r.raw),
});

/** The mirror's active rows in primary-key order (keyset), PAGE_SIZE rows a page. */
async function* keyPages(pool: Pool): AsyncGenerator<MirrorPage> {
  let after: [string, string] = ['-1', '-1'];
  for (;;) {
    const { rows } = await pool.query<MirrorRow>(
      `SELECT ${MIRROR_COLUMNS} FROM listings WHERE removed_at IS NULL AND (event_id, ticket_id) > ($1, $2)
       ORDER BY event_id, ticket_id LIMIT ${PAGE_SIZE}`,
      after,
    );
    if (rows.length === 0) return;
    yield mirrorPage(rows);
    const last = rows[rows.length - 1];
    after = [last?.e ?? '', last?.t ?? ''];
  }
}

/** Heap blocks read per TID range scan in `heapPages`. */
const HEAP_BLOCKS_PER_READ = 64;

/**
 * The mirror's active rows in the heap's physical order (TID range scans), PAGE_SIZE rows a page like `keyPages`,
 * so the two baselines differ in the order only. The empty pass COPYs each upstream page straight into `listings`,
 * so that order is the upstream's; the full pass's 10% rewrites moved those rows to the heap's end.
 */
async function* heapPages(pool: Pool): AsyncGenerator<MirrorPage> {
  const { rows: sized } = await pool.query<{ blocks: string }>(
    `SELECT (pg_relation_size('listings') / current_setting('block_size')::int)::text AS blocks`,
  );
  const blocks = Number(sized[0]?.blocks ?? 0);
  let pending: MirrorRow[] = [];
  for (let from = 0; from < blocks; from += HEAP_BLOCKS_PER_READ) {
    const { rows } = await pool.query<MirrorRow>(
      `SELECT ${MIRROR_COLUMNS} FROM listings
       WHERE ctid >= $1::tid AND ctid < $2::tid AND removed_at IS NULL`,
      [`(${from},0)`, `(${from + HEAP_BLOCKS_PER_READ},0)`],
    );
    pending = pending.concat(rows);
    while (pending.length >= PAGE_SIZE) {
      yield mirrorPage(pending.slice(0, PAGE_SIZE));
      pending = pending.slice(PAGE_SIZE);
    }
  }
  if (pending.length > 0) yield mirrorPage(pending);
}

const MERGE = (source: string, target: string) => `
  INSERT INTO ${target} AS l (event_id, ticket_id, ask_price_minor, expires_at, raw, first_seen_at, last_seen_at,
    observed_at)
  SELECT s.event_id, s.ticket_id, s.ask_price_minor, s.expires_at, s.raw::jsonb, now(), now(), now() FROM ${source}
  ON CONFLICT (event_id, ticket_id) DO UPDATE SET ask_price_minor = excluded.ask_price_minor,
    expires_at = excluded.expires_at, raw = excluded.raw
  WHERE l.raw <> excluded.raw`;

/** Baselines: the same rows into an empty copy of `listings` (same indexes), one transaction per page. */
async function loadBaseline(
  pool: Pool,
  how: 'copy' | 'unnest',
  order: RowOrder = 'key',
): Promise<{ rows: number; seconds: number }> {
  const client: PoolClient = await pool.connect();
  const target = `bench_${how}`;
  try {
    await client.query(`DROP TABLE IF EXISTS ${target}`);
    await client.query(`CREATE TABLE ${target} (LIKE listings INCLUDING ALL)`);
    await client.query(
      `CREATE TEMP TABLE IF NOT EXISTS bench_stage (event_id numeric, ticket_id numeric, ask_price_minor numeric,
         expires_at bigint, raw text)`,
    );
    let rows = 0;
    let ns = 0n;
    for await (const page of order === 'key' ? keyPages(pool) : heapPages(pool)) {
      const copyBody =
        how === 'copy'
          ? page.e
              .map((e, i) =>
                [
                  e,
                  page.t[i] ?? '',
                  page.p[i] ?? '',
                  copyText(page.x[i] ?? null),
                  copyText(page.raw[i] ?? ''),
                ].join('\t'),
              )
              .join('\n') + '\n'
          : '';
      const started = process.hrtime.bigint();
      await client.query('BEGIN');
      if (how === 'copy') {
        await client.query('TRUNCATE bench_stage');
        await copyFrom(client, 'COPY bench_stage FROM STDIN', copyBody);
        await client.query(MERGE('bench_stage s', target));
      } else {
        await client.query(
          MERGE(
            `unnest($1::numeric[], $2::numeric[], $3::numeric[], $4::bigint[], $5::text[])
               AS s(event_id, ticket_id, ask_price_minor, expires_at, raw)`,
            target,
          ),
          [
            numericArray(page.e.map(BigInt)),
            numericArray(page.t.map(BigInt)),
            numericArray(page.p.map(BigInt)),
            nullableBigintArray(page.x.map((x) => (x === null ? null : BigInt(x)))),
            textArray(page.raw),
          ],
        );
      }
      await client.query('COMMIT');
      ns += process.hrtime.bigint() - started;
      rows += page.e.length;
    }
    await client.query(`DROP TABLE ${target}`);
    return { rows, seconds: Number(ns) / 1e9 };
  } finally {
    client.release();
  }
}

/** Listings whose price a catalog-events pass changes back (issue 32: "a pass changing 10,000 listings"). */
const CATALOG_CHANGED = 10_000;
const CATALOG_TYPES = ['listing.listed', 'listing.price_changed', 'listing.removed'];
/** The catalog's triggers on `listings`, with the collection of inserted rows (…-CollectInsertedListings.ts). */
const CATALOG_TRIGGERS = [
  'listings_inserted_prepare',
  'listings_inserted_collect',
  'listings_catalog_inserted',
  'listings_catalog_updated',
];

/**
 * Makes CATALOG_CHANGED listings differ from the upstream in price (and raw, which the merge's content check
 * compares): priced 25 % above the upstream in the mirror, so the next full pass writes each back as a 20 % drop, a
 * `listing.price_changed` per row for a subscriber and a `watch.matched` for every 10 % drop watch of its event. The
 * bench's own UPDATE announces nothing (a price rise matches no watch; `bff.catalog_backfill` silences the catalog
 * triggers for its transaction), so only the pass's writes are counted.
 */
async function skewPrices(pool: Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`SELECT set_config('bff.catalog_backfill', 'on', true)`);
    await client.query(
      `UPDATE listings SET ask_price_minor = ask_price_minor * 5 / 4 + 1, raw = raw || '{"bench_price": true}'
       WHERE (event_id, ticket_id) IN (SELECT event_id, ticket_id FROM listings WHERE removed_at IS NULL
                                       ORDER BY ticket_id LIMIT ${CATALOG_CHANGED})`,
    );
    await client.query('COMMIT');
  } finally {
    client.release();
  }
  // Every table a pass of this scenario writes, so no autovacuum runs during the measured pass: the rounds'
  // deletes (watches with their alerts, endpoints with their deliveries) left 100,000s of dead rows, and the
  // autovacuum of them slowed the no-subscriber pass after each round by up to 40 % (session 22's first run).
  await pool.query(
    'VACUUM ANALYZE listings, outbox_events, webhook_deliveries, webhook_endpoints, watches, watch_alerts',
  );
}

/** Watches of the catalog scenario (issue 32: "with 100,000 watches and 10 endpoints"). */
const CATALOG_WATCHES = Number(process.env.BENCH_CATALOG_WATCHES ?? 100_000);

/**
 * Rounds of the catalog scenario (BENCH_CATALOG_ROUNDS, default 3). One pass's time moves by 5–17 % on this machine
 * within one run (session 21: the same no-subscriber pass 26.6 and 31.2 s, minutes apart), as much as the 20 % the
 * target allows, so one pass of each kind decided a verdict by chance. Each round is a 10-endpoint pass, a pass with
 * the watches too and a no-subscriber pass; a round's ratios are against the mean of the no-subscriber passes on
 * either side of it, and the verdict is the median round's.
 */
const CATALOG_ROUNDS = Math.max(1, Number(process.env.BENCH_CATALOG_ROUNDS ?? 3));

interface CatalogFigures {
  /** The no-subscriber passes (s): one before the first round and one after each. */
  nones: number[];
  /** Per round (s): the pass with 10 endpoints, and with them and the watches. */
  subscribed: number[];
  watched: number[];
  /** Per round: against the mean of the no-subscriber passes before and after it. */
  subscribedRatios: number[];
  watchedRatios: number[];
  /** Round 1's counts; `countsHeld`: every round wrote what round 1 did. */
  events: number;
  deliveries: number;
  watchedEvents: number;
  watchedDeliveries: number;
  watchMatched: number;
  watchExpected: number;
  countsHeld: boolean;
  emptyWithout: number;
}

async function catalogCounts(pool: Pool): Promise<{ events: number; deliveries: number; matched: number }> {
  const { rows } = await pool.query<{ events: number; deliveries: number; matched: number }>(
    `SELECT (SELECT count(*)::int FROM outbox_events WHERE type LIKE 'listing.%') AS events,
            (SELECT count(*)::int FROM webhook_deliveries) AS deliveries,
            (SELECT count(*)::int FROM outbox_events WHERE type = 'watch.matched') AS matched`,
  );
  const [row] = rows;
  if (!row) throw new Error('no counts');
  return row;
}

/** A pass's seconds and what it wrote (catalog events, deliveries, watch.matched). */
async function countedPass(
  pool: Pool,
  upstream: UpstreamClient,
): Promise<{ seconds: number; events: number; deliveries: number; matched: number }> {
  const before = await catalogCounts(pool);
  const { seconds } = await syncPass(pool, upstream);
  const after = await catalogCounts(pool);
  return {
    seconds,
    events: after.events - before.events,
    deliveries: after.deliveries - before.deliveries,
    matched: after.matched - before.matched,
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Issue 32: a pass changing CATALOG_CHANGED listings (20 % drops) with no subscriber; then CATALOG_ROUNDS rounds of
 * the same pass with 10 endpoints (one client, each taking every catalog event: the heaviest filter), with those
 * endpoints and CATALOG_WATCHES watches of the same client (half 10 % drop watches, which every changed row of
 * their event matches: dense matches, ~10 per change with 5,000 events), and with no subscriber again; and an
 * empty-mirror pass with the catalog triggers disabled (what the triggers cost a backfill). Deleting the watches
 * after a round deletes their alerts, so the next round's drops (the same prices) match again.
 */
async function catalogEvents(pool: Pool, upstream: UpstreamClient): Promise<CatalogFigures> {
  // BENCH_SYNC_WATCHES's watches (the full pass above) are not part of this scenario's "none".
  await pool.query('DELETE FROM watches');
  await skewPrices(pool);
  const nones = [(await syncPass(pool, upstream)).seconds];
  const noneAround = (round: number) => (nones[round] + nones[round + 1]) / 2;
  const [{ id: clientId }] = (
    await pool.query<{ id: string }>(
      `INSERT INTO api_clients (name, key_prefix, key_hash, scopes)
       VALUES ('bench', 'trb_live_bench000001', sha256('bench'), ARRAY['webhooks:write', 'watches:write'])
       RETURNING id`,
    )
  ).rows;
  const subscribed: Awaited<ReturnType<typeof countedPass>>[] = [];
  const watched: Awaited<ReturnType<typeof countedPass>>[] = [];
  const expected: number[] = [];
  for (let round = 0; round < CATALOG_ROUNDS; round++) {
    await pool.query(
      `INSERT INTO webhook_endpoints (client_id, url, event_types, secret)
       SELECT $1, 'https://hooks.example.com/' || n, $2::text[], '\\x00' FROM generate_series(1, 10) n`,
      [clientId, CATALOG_TYPES],
    );
    await skewPrices(pool);
    if (round === 0) await resetPgStats(pool);
    subscribed.push(await countedPass(pool, upstream));
    if (round === 0) await printSyncPgStats(pool, 'the pass with 10 endpoints');
    await seedWatches(pool, CATALOG_WATCHES, clientId);
    await skewPrices(pool);
    // Every drop watch of a skewed row's event matches its 20 % drop; no max-price watch (max 1) is crossed.
    const [matchable] = (
      await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM listings l JOIN watches w ON w.event_id = l.event_id
         WHERE l.raw ? 'bench_price' AND l.removed_at IS NULL AND w.min_drop_percent IS NOT NULL`,
      )
    ).rows;
    expected.push(matchable?.n ?? -1);
    if (round === 0) await resetPgStats(pool);
    watched.push(await countedPass(pool, upstream));
    if (round === 0) await printSyncPgStats(pool, 'the pass with 10 endpoints and the watches');
    await pool.query('DELETE FROM watches');
    await pool.query(`DELETE FROM webhook_endpoints`);
    await skewPrices(pool);
    nones.push((await syncPass(pool, upstream)).seconds);
    const none = noneAround(round);
    progress(
      `catalog round ${round + 1}/${CATALOG_ROUNDS}: none ${none.toFixed(2)} s, 10 endpoints ` +
        `${(subscribed[round]?.seconds ?? 0).toFixed(2)} s, + watches ${(watched[round]?.seconds ?? 0).toFixed(2)} s`,
    );
  }
  await pool.query(`TRUNCATE listings`);
  for (const trigger of CATALOG_TRIGGERS) await pool.query(`ALTER TABLE listings DISABLE TRIGGER ${trigger}`);
  try {
    const without = await syncPass(pool, upstream);
    const [first, firstWatched] = [subscribed[0], watched[0]];
    if (!first || !firstWatched) throw new Error('no catalog round ran');
    return {
      nones,
      subscribed: subscribed.map((p) => p.seconds),
      watched: watched.map((p) => p.seconds),
      subscribedRatios: subscribed.map((p, round) => p.seconds / noneAround(round)),
      watchedRatios: watched.map((p, round) => p.seconds / noneAround(round)),
      events: first.events,
      deliveries: first.deliveries,
      watchedEvents: firstWatched.events,
      watchedDeliveries: firstWatched.deliveries,
      watchMatched: firstWatched.matched,
      watchExpected: expected[0] ?? -1,
      countsHeld: subscribed.every(
        (p, round) =>
          p.events === CATALOG_CHANGED &&
          p.deliveries === 10 * CATALOG_CHANGED &&
          p.matched === 0 &&
          watched[round]?.events === CATALOG_CHANGED &&
          watched[round]?.deliveries === 10 * CATALOG_CHANGED &&
          watched[round]?.matched === expected[round] &&
          (expected[round] ?? 0) > 0,
      ),
      emptyWithout: without.pass.items / without.seconds,
    };
  } finally {
    for (const trigger of CATALOG_TRIGGERS)
      await pool.query(`ALTER TABLE listings ENABLE TRIGGER ${trigger}`);
  }
}

/** BENCH_PG_STATS=1: pg_stat_statements (loaded into the bench's own cluster) emptied before a measured pass. */
async function resetPgStats(pool: Pool): Promise<void> {
  if (process.env.BENCH_PG_STATS !== '1') return;
  await pool.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  await pool.query('SELECT pg_stat_statements_reset()');
}

async function printSyncPgStats(pool: Pool, what: string): Promise<void> {
  if (process.env.BENCH_PG_STATS !== '1') return;
  console.log(`  ${what}:`);
  const client = await pool.connect();
  try {
    await printPgStats(client, 15);
  } finally {
    client.release();
  }
}

/**
 * `npm run bench -- sync`: a full listings pass of N listings (default 1,000,000) from the standalone sandbox
 * (its own process) into an empty mirror, then over the full mirror with 10% of rows changed and 1% extra
 * (removed upstream), through the real pass runner; against baselines measured in the same run: the same
 * rows loaded with COPY + merge (and with unnest + merge), the sandbox vs a bare server serving the same
 * page bytes, and the client walk vs a bare GET + JSON.parse walk.
 */
/** The mirror's tables: what a full pass into an empty mirror leaves on disk. */
const MIRROR_TABLES = ['events', 'listings', 'event_freshness'] as const;

export async function benchCatalogSync(listings: number): Promise<BenchReport> {
  const db = await database();
  const sandbox = await spawnSandbox(listings);
  const pool = new Pool({ connectionString: db.url, max: 4 });
  // Idle clients are terminated when the cluster stops at the end; that must not hide the run's own error.
  pool.on('error', () => undefined);
  const upstream = UpstreamClient.create({
    baseUrl: sandbox.url,
    apiKey: sandbox.apiKey,
    environment: 'sandbox',
    rateLimit: { ratePerSecond: 10_000 },
    logger: pino({ level: 'warn' }),
  });
  try {
    // 1. Into an empty mirror (and what the mirror then holds on disk, for DEPLOY.md's sizing).
    const sizesBefore = await tableSizes(pool, MIRROR_TABLES);
    const empty = await syncPass(pool, upstream);
    progress(`empty pass: ${fmt(empty.pass.items / empty.seconds)} items/s (${empty.seconds.toFixed(1)} s)`);
    const onDisk = perMillion(sizesBefore, await tableSizes(pool, MIRROR_TABLES), listings);
    // 2. Over the full mirror: 10% of rows differ from the upstream, 1% are gone upstream.
    // BENCH_SYNC_WATCHES=N (opt-in, 0 included): the 10% are also priced 25% above the upstream in the mirror, so
    // the pass sees each of them drop 20% (what price watches react to), and N watches are seeded first.
    const watchCount =
      process.env.BENCH_SYNC_WATCHES === undefined ? null : Number(process.env.BENCH_SYNC_WATCHES);
    await pool.query(
      `UPDATE listings SET raw = raw || '{"bench_stale": true}'${watchCount === null ? '' : ', ask_price_minor = ask_price_minor * 5 / 4 + 1'}
       WHERE abs(hashtext(ticket_id::text)) % 10 = 3`,
    );
    if (watchCount !== null && watchCount > 0) await seedWatches(pool, watchCount);
    const matchedBefore = await watchMatches(pool);
    await pool.query(
      `INSERT INTO listings (event_id, ticket_id, ask_price_minor, raw, first_seen_at, last_seen_at, observed_at)
       SELECT event_id, ticket_id + 10000000000000000000, ask_price_minor, raw, now(), now(), now() - interval '1 day'
       FROM listings WHERE abs(hashtext(ticket_id::text || 'x')) % 100 = 7`,
    );
    await pool.query('VACUUM ANALYZE listings');
    const changed = await syncPass(pool, upstream);
    progress(
      `full pass: ${fmt(changed.pass.items / changed.seconds)} items/s (${changed.seconds.toFixed(1)} s)`,
    );
    const matched = (await watchMatches(pool)) - matchedBefore;
    // 3. Baselines on the same rows.
    const copy = await loadBaseline(pool, 'copy');
    progress(`COPY + merge baseline: ${fmt(copy.rows / copy.seconds)} rows/s`);
    const unnest = await loadBaseline(pool, 'unnest');
    // The same COPY + merge with the rows in the upstream's order, as the pass gets them (for the report only).
    const copyUpstream = await loadBaseline(pool, 'copy', 'upstream');
    progress(
      `COPY + merge baseline, upstream order: ${fmt(copyUpstream.rows / copyUpstream.seconds)} rows/s`,
    );
    // 4. Stage ratios: sandbox vs bare server (same page bytes), client walk vs bare walk.
    const raw = await walkListingsRaw(sandbox.url, sandbox.apiKey, PAGE_SIZE);
    const agent = new Agent({ keepAlive: false });
    const body = await httpGet(agent, new URL(`${sandbox.url}/indexer/listings/active?limit=${PAGE_SIZE}`), {
      'x-api-key': sandbox.apiKey,
    });
    agent.destroy();
    const bare = Fastify({ logger: false });
    bare.get('/page', (_req, reply) => reply.type('application/json').send(body));
    await bare.listen({ port: 0, host: '127.0.0.1' });
    const address = bare.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const bareRate = await walkStaticPages(new URL(`http://127.0.0.1:${port}/page`), raw.pages);
    await bare.close();
    let clientItems = 0;
    const clientStarted = process.hrtime.bigint();
    for await (const page of upstream.walkActiveListings({ limit: PAGE_SIZE }))
      clientItems += page.items.length;
    const clientSeconds = Number(process.hrtime.bigint() - clientStarted) / 1e9;
    // 5. Catalog events (issue 32); BENCH_SYNC_CATALOG=0 skips them (four more passes: a 5,000,000-listing run's
    // core figures come in about half the time without).
    const catalog = process.env.BENCH_SYNC_CATALOG === '0' ? null : await catalogEvents(pool, upstream);

    const rawRate = raw.items / raw.seconds;
    const clientRate = clientItems / clientSeconds;
    const emptyRate = empty.pass.items / empty.seconds;
    const changedRate = changed.pass.items / changed.seconds;
    const copyRate = copy.rows / copy.seconds;
    const unnestRate = unnest.rows / unnest.seconds;
    const copyUpstreamRate = copyUpstream.rows / copyUpstream.seconds;
    const peakRss = Math.max(empty.peakRssMb, changed.peakRssMb);
    return {
      name: `catalog sync: listings pass of ${listings.toLocaleString('en')} listings (sandbox in its own process)`,
      rows: [
        [
          'sync into empty mirror items/s',
          `${fmt(emptyRate)} (${empty.seconds.toFixed(1)} s, ${fmt(empty.pass.upserted)} written)`,
        ],
        [
          'sync over full mirror (10% changed, 1% removed) items/s',
          `${fmt(changedRate)} (${changed.seconds.toFixed(1)} s, ${fmt(changed.pass.upserted)} written, ${fmt(changed.pass.removed)} removed)`,
        ],
        ['pass stage seconds (empty / full)', `${empty.stages} / ${changed.stages}`],
        ...(watchCount === null
          ? []
          : [
              [
                'watches (BENCH_SYNC_WATCHES) / watch.matched written by the full pass',
                `${fmt(watchCount)} / ${fmt(matched)}`,
              ] as [string, string],
            ]),
        ['baseline COPY + merge rows/s (same rows, same indexes)', fmt(copyRate)],
        ['unnest (hand-built arrays) + merge rows/s (same rows)', fmt(unnestRate)],
        ['ratio sync (empty) / COPY baseline', (emptyRate / copyRate).toFixed(2)],
        ['ratio sync (full, 10%/1%) / COPY baseline', (changedRate / copyRate).toFixed(2)],
        ["baseline COPY + merge rows/s, rows in the upstream's order (report only)", fmt(copyUpstreamRate)],
        [
          "ratio sync (empty) / COPY baseline in the upstream's order",
          (emptyRate / copyUpstreamRate).toFixed(2),
        ],
        ['peak RSS of the syncing process MB', peakRss.toFixed(0)],
        ['V8 heap limit of the syncing process MB', heapLimitText()],
        ['PostgreSQL shared_buffers (pass and baselines alike)', await sharedBuffers(pool)],
        ['mirror on disk per million listings (after the empty pass)', onDisk],
        ['memory (empty pass)', empty.memory],
        ['memory (full pass)', changed.memory],
        ['stage: sandbox (GET + JSON.parse) items/s', fmt(rawRate)],
        ['stage: bare server, same page bytes items/s', fmt(bareRate.itemsPerSecond)],
        ['stage ratio sandbox / bare server', (rawRate / bareRate.itemsPerSecond).toFixed(2)],
        ['stage: client walk (walkActiveListings) items/s', fmt(clientRate)],
        ['stage ratio client walk / bare walk', (clientRate / rawRate).toFixed(2)],
        ...(catalog ? catalogRows(catalog, emptyRate) : []),
      ],
      targets: [
        {
          what: 'the pass mirrors every listing',
          ok: empty.pass.items === listings && empty.pass.upserted === listings,
        },
        {
          what: 'the second pass rewrites the 10% and removes the 1%',
          ok: changed.pass.upserted > 0 && changed.pass.removed > 0,
        },
        { what: 'sync >= 0.6x the COPY + merge baseline (empty mirror)', ok: emptyRate / copyRate >= 0.6 },
        // The pass runs in this process: its memory is the service's only with the service's node options.
        {
          what: `peak RSS < 300 MB (with the service's ${SERVICE_NODE_FLAGS.join(' ')})`,
          ok: peakRss < 300 && !startedWithoutHeapLimit(heapLimitMb()),
        },
        ...(catalog ? catalogTargets(catalog) : []),
      ],
    };
  } finally {
    upstream.close();
    await pool.end();
    sandbox.child.kill('SIGTERM');
    await db.stop();
  }
}

/** A phase's figure as soon as it is measured (stderr): a long run shows where it is. */
function progress(line: string): void {
  process.stderr.write(`  [sync bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
}

const list = (values: readonly number[], digits: number): string =>
  values.map((v) => v.toFixed(digits)).join(' / ');

function catalogRows(catalog: CatalogFigures, emptyRate: number): [string, string][] {
  return [
    [
      `catalog: pass changing ${fmt(CATALOG_CHANGED)} prices, no subscriber, before and after each of ${CATALOG_ROUNDS} rounds (s)`,
      list(catalog.nones, 2),
    ],
    [
      'catalog: per round, 10 endpoints / + watches (s)',
      catalog.subscribed
        .map((s, i) => `${s.toFixed(2)} / ${(catalog.watched[i] ?? 0).toFixed(2)}`)
        .join(', '),
    ],
    [
      'catalog: round 1 wrote (10 endpoints; + watches)',
      `${fmt(catalog.events)} events, ${fmt(catalog.deliveries)} deliveries; ${fmt(catalog.watchedEvents)} events, ${fmt(catalog.watchedDeliveries)} deliveries, ${fmt(catalog.watchMatched)} watch.matched of ${fmt(catalog.watchExpected)} expected`,
    ],
    [
      'catalog: ratio subscribed / no subscriber, median (rounds)',
      `${median(catalog.subscribedRatios).toFixed(2)} (${list(catalog.subscribedRatios, 2)})`,
    ],
    [
      `catalog: ratio endpoints and ${fmt(CATALOG_WATCHES)} watches / no subscriber, median (rounds)`,
      `${median(catalog.watchedRatios).toFixed(2)} (${list(catalog.watchedRatios, 2)})`,
    ],
    [
      'catalog: empty mirror items/s with the catalog triggers / without',
      `${fmt(emptyRate)} / ${fmt(catalog.emptyWithout)} (${(emptyRate / catalog.emptyWithout).toFixed(2)})`,
    ],
  ];
}

function catalogTargets(catalog: CatalogFigures): { what: string; ok: boolean }[] {
  return [
    {
      what: 'catalog: every round announces each change once (10 deliveries each) and one watch.matched per drop watch',
      ok: catalog.countsHeld,
    },
    {
      what: 'catalog: 10 subscribed endpoints cost at most 20 % more than none (median round)',
      ok: median(catalog.subscribedRatios) <= 1.2,
    },
    {
      what: 'catalog: 10 endpoints and the watches cost at most 20 % more than none (median round)',
      ok: median(catalog.watchedRatios) <= 1.2,
    },
  ];
}
