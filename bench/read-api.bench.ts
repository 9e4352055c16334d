import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from 'pg';
import { generateApiKey } from '../src/auth/api-key';
import { SERVICE_NODE_FLAGS } from '../src/common/node-flags';
import { createDataSource } from '../src/database/data-source';
import { startEmbeddedPostgres } from '../src/database/embedded-postgres';
import { clusterCpuSeconds, cpuSecondsOf, postmasterPidOf } from './read-api.cpu';
import { getJson, runLoad, summarize, type LoadResult, type LoadSample } from './read-api.load';
import type { BenchReport } from './report';

const CONNECTIONS = Number(process.env.BENCH_READ_CONNECTIONS ?? 32);
const BIG_EVENT = '1';
const CATEGORIES = ['Concert', 'Opera', 'Final', 'Festival', 'Match', 'Comedy Night', 'Ballet'];

/** Deterministic PRNG (mulberry32): the same request mix for every server of a run. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The listing's raw item as SQL over the given column expressions. */
const rawSql = (e: string, t: string, p: string): string =>
  `jsonb_build_object('event_id', ${e}::text, 'ticket_id', ${t}::text, 'ask_price_minor', ${p}::text,
    'seller', 'Se11er' || md5(${t}::text), 'stablecoin_mint', 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
    'expires_at', '1893456000', 'permit_version', '1')`;

/**
 * The mirror straight into the tables (set-based INSERT … SELECT generate_series inside PostgreSQL; the
 * tree has no COPY-stream package and this needs none): `events` events, event 1 with `big` listings,
 * the others 10–100 each until `total`. Indexes are dropped for the load and rebuilt from their own
 * definitions, then ANALYZE. A completed pass per resource and a protocol config make answers complete.
 */
export async function loadMirror(url: string, total: number, events: number, big: number): Promise<void> {
  const db = new Client({ connectionString: url });
  await db.connect();
  try {
    const { rows: indexes } = await db.query<{ name: string; def: string }>(
      `SELECT indexname AS name, indexdef AS def FROM pg_indexes
       WHERE tablename IN ('events', 'listings') AND indexname NOT LIKE '%pkey'`,
    );
    for (const index of indexes) await db.query(`DROP INDEX ${index.name}`);
    await db.query(
      `INSERT INTO events (event_id, name, start_at_raw, start_at, raw, first_seen_at, last_seen_at, observed_at)
       SELECT i, 'Event ' || i || ' ' || ($2::text[])[1 + i % 7] || ' ' || md5(i::text),
         to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), t,
         jsonb_build_object('event_id', i::text, 'name', 'Event ' || i), now() - interval '1 day', now(), now()
       FROM generate_series(1, $1::int) i,
         LATERAL (SELECT timestamptz '2027-01-01' + (i * 7919 % $1::int) * interval '37 minutes' AS t) s`,
      [events, CATEGORIES],
    );
    await db.query(
      `INSERT INTO listings (event_id, ticket_id, ask_price_minor, expires_at, raw, first_seen_at, last_seen_at, observed_at)
       SELECT 1, g, p, 1893456000, ${rawSql('1', 'g', 'p')}, now() - (g % 86400) * interval '1 second', now(), now()
       FROM generate_series(1, $1::int) g, LATERAL (SELECT (1000000 + (g::bigint * 104729) % 900000000)::numeric AS p) s`,
      [big],
    );
    await db.query(
      `INSERT INTO listings (event_id, ticket_id, ask_price_minor, expires_at, raw, first_seen_at, last_seen_at, observed_at)
       SELECT e, t, p, 1893456000, ${rawSql('e', 't', 'p')}, now() - (t % 86400) * interval '1 second', now(), now()
       FROM (SELECT e, 1000000 + e::bigint * 1000 + k AS t,
               (1000000 + ((e::bigint * 1000 + k) * 104729) % 900000000)::numeric AS p
             FROM generate_series(2, $1::int) e, LATERAL generate_series(1, 10 + (e * 7919) % 91) k
             LIMIT $2::int) b`,
      [events, total - big],
    );
    for (const index of indexes) await db.query(index.def);
    await db.query(
      `INSERT INTO sync_passes (resource, status, started_at, finished_at, holder, fencing_token)
       VALUES ('events', 'completed', now(), now(), 'bench', 1), ('listings', 'completed', now(), now(), 'bench', 1)`,
    );
    await db.query(
      `INSERT INTO protocol_config (stablecoin_decimals, stablecoin_mint, raw, fetched_at)
       VALUES (6, 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', '{}', now())`,
    );
    await db.query('VACUUM ANALYZE events');
    await db.query('VACUUM ANALYZE listings');
  } finally {
    await db.end();
  }
}

async function sampleListings(url: string, count: number): Promise<[string, string][]> {
  const db = new Client({ connectionString: url });
  await db.connect();
  try {
    const { rows } = await db.query<{ e: string; t: string }>(
      `SELECT event_id::text AS e, ticket_id::text AS t FROM listings TABLESAMPLE SYSTEM (1) REPEATABLE (7) LIMIT $1`,
      [count],
    );
    return rows.map((r) => [r.e, r.t]);
  } finally {
    await db.end();
  }
}

interface Server {
  child: ChildProcess;
  port: number;
}

async function startServer(mode: 'app' | 'baseline', env: NodeJS.ProcessEnv): Promise<Server> {
  // BENCH_READ_CPU_PROF=<dir>: V8 CPU profiles of the servers, to see where their time goes.
  const profile = process.env.BENCH_READ_CPU_PROF;
  const flags = profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [];
  // The service with its own node options (as `npm start`); the baseline as plain `node`.
  if (mode === 'app') flags.push(...SERVICE_NODE_FLAGS);
  const child = spawn(process.execPath, [...flags, join(__dirname, 'read-api.server.js'), mode], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${mode} server did not start within 60 s`)), 60_000);
    lines.on('line', (line) => {
      if (process.env.BENCH_READ_DEBUG) process.stderr.write(`[${mode}] ${line.slice(0, 300)}\n`);
      const match = /^READY (\d+)$/.exec(line);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.once('exit', (code) => reject(new Error(`${mode} server exited with ${code}`)));
  });
  return { child, port };
}

async function stopServer(server: Server): Promise<void> {
  if (server.child.exitCode !== null) return;
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGTERM');
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Every cursor of the big event's price-ordered walk (page 1 = no cursor), for random-depth requests. */
async function walkCursors(
  port: number,
  path: (cursor: string | null) => string,
  headers: Record<string, string>,
) {
  const cursors: (string | null)[] = [null];
  for (let page = 0; page < 100_000; page++) {
    const body = await getJson<{ next_cursor: string | null }>(port, path(cursors.at(-1) ?? null), headers);
    if (body.next_cursor === null) return cursors;
    cursors.push(body.next_cursor);
  }
  throw new Error('walk did not end');
}

type Scenario = 'R1' | 'R2' | 'R3';
/** BENCH_READ_SCENARIOS=R1,R3 runs only those (for profiling one path); the full suite runs all three. */
const SCENARIOS = (['R1', 'R2', 'R3'] as const).filter((s) =>
  (process.env.BENCH_READ_SCENARIOS ?? 'R1,R2,R3').split(',').includes(s),
);

const SLICE_SECONDS = 2;
type Flavour = 'baseline' | 'cache off' | 'cache on';

/**
 * `npm run bench -- read`: the read API against a hand-written Fastify + pg server over the same
 * 1,000,000-listing mirror, 32 keep-alive connections for BENCH_READ_SECONDS (default 20) per scenario:
 * R1 the big event's listings by price at random cursor depths, R2 the events list with a name search,
 * R3 one listing. The service runs twice: cache off (every request reads PostgreSQL) and cache on.
 */
export async function benchReadApi(): Promise<BenchReport> {
  const seconds = Number(process.env.BENCH_READ_SECONDS ?? 20);
  const total = Number(process.env.BENCH_LISTINGS ?? 1_000_000);
  const events = Math.max(2, Math.round(total / 50));
  const big = Math.min(50_000, Math.round(total / 20));
  const dir = await mkdtemp(join(tmpdir(), 'bff-bench-read-'));
  await chmod(dir, 0o755);
  const pg = await startEmbeddedPostgres({
    dataDir: join(dir, 'cluster'),
    settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '200' },
  });
  const results = new Map<string, LoadResult>();
  /** CPU seconds per scenario and server while it was loaded: load generator, server process, PostgreSQL. */
  const cpu = new Map<string, { load: number; server: number; postgres: number }>();
  /** The cluster's postmaster (its backends are its children): read once, it stays for the run. */
  const postmaster = postmasterPidOf(join(dir, 'cluster'));
  try {
    const admin = new Client({ connectionString: pg.url });
    await admin.connect();
    await admin.query('CREATE DATABASE bench_read');
    await admin.end();
    const url = pg.url.replace(/\/postgres$/, '/bench_read');
    const dataSource = createDataSource({ url, poolSize: 1 });
    await dataSource.initialize();
    await dataSource.runMigrations({ transaction: 'each' });
    await dataSource.destroy();
    const loadStarted = Date.now();
    await loadMirror(url, total, events, big);
    const loadSeconds = (Date.now() - loadStarted) / 1000;

    const key = generateApiKey();
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      NODE_ENV: 'development',
      DATABASE_URL: url,
      DATA_DIR: join(dir, 'data'),
      MIGRATIONS_RUN: 'false',
      LOG_LEVEL: 'warn',
      BFF_BOOTSTRAP_API_KEY: key,
      // The rate limiter runs and counts every request (its store is O(1) per request); a 1 s window keeps
      // these rates (up to ~15,000/s) under the largest budget the configuration accepts (100,000).
      RATE_LIMIT_WINDOW_MS: '1000',
      RATE_LIMIT_CATALOG_READ: '100000',
      SYNC_ENABLED: 'false',
      // The mirror is seeded straight into the tables (rows the in-process sandbox never had): the served-accuracy
      // sampler would find them gone upstream and remove them mid-run (R3 answered 404s).
      MIRROR_ACCURACY_SAMPLE_INTERVAL_MS: '0',
      DB_POOL_SIZE: '10',
    };
    const listingKeys = await sampleListings(url, 2000);
    const random = prng(42);
    const pick = <T>(items: readonly T[]): T => {
      const item = items[Math.floor(random() * items.length)];
      if (item === undefined) throw new Error('nothing to pick from');
      return item;
    };
    const terms = [
      ...CATEGORIES.map((c) => c.toLowerCase()),
      ...Array.from({ length: 43 }, (_, i) => `event ${100 + i}`),
    ];

    /** The request paths of each scenario for one server (its own cursors, the same depths). */
    const requestMix = async (
      port: number,
      app: boolean,
      headers: Record<string, string>,
    ): Promise<Record<Scenario, () => string>> => {
      const r1 = (cursor: string | null): string => {
        const base = app
          ? `/v1/events/${BIG_EVENT}/listings?sort=price_asc`
          : `/events/${BIG_EVENT}/listings?x=1`;
        return cursor === null ? base : `${base}&cursor=${encodeURIComponent(cursor)}`;
      };
      const cursors = await walkCursors(port, r1, headers);
      // The same random depths (page numbers) on every server.
      const depths = prng(7);
      const pool = Array.from({ length: 500 }, () => cursors[Math.floor(depths() * cursors.length)] ?? null);
      return {
        R1: () => r1(pick(pool)),
        R2: () => `${app ? '/v1/events' : '/events'}?q=${encodeURIComponent(pick(terms))}`,
        R3: () => {
          const [e, t] = pick(listingKeys);
          return `${app ? '/v1/listings' : '/listings'}/${e}/${t}`;
        },
      };
    };

    const flavours: [Flavour, 'app' | 'baseline', NodeJS.ProcessEnv][] = [
      ['baseline', 'baseline', env],
      ['cache off', 'app', { ...env, LISTINGS_CACHE_MAX_BYTES: '0' }],
      ['cache on', 'app', env],
    ];
    // All three servers up at once, measured in interleaved slices (baseline, cache off, cache on, again…),
    // so drifting load on a shared machine hits every flavour alike.
    const servers = new Map<
      Flavour,
      { server: Server; headers: Record<string, string>; paths: Record<Scenario, () => string> }
    >();
    try {
      for (const [flavour, mode, serverEnv] of flavours) {
        const server = await startServer(mode, serverEnv);
        const app = mode === 'app';
        const headers: Record<string, string> = app ? { authorization: `Bearer ${key}` } : {};
        servers.set(flavour, { server, headers, paths: await requestMix(server.port, app, headers) });
      }
      for (const { server, headers, paths } of servers.values()) {
        // Warm-up: JIT, pools, PostgreSQL buffers (not measured).
        await runLoad({
          port: server.port,
          connections: CONNECTIONS,
          seconds: 2,
          headers,
          nextPath: paths.R1,
        });
      }
      const slices = Math.max(1, Math.round(seconds / SLICE_SECONDS));
      for (const scenario of SCENARIOS) {
        const samples = new Map<Flavour, LoadSample[]>();
        for (let slice = 0; slice < slices; slice++) {
          for (const [flavour, { server, headers, paths }] of servers) {
            // Only this server is loaded during its slice: the cluster's CPU meanwhile is its queries'.
            const pid = server.child.pid ?? 0;
            const before = {
              load: process.cpuUsage(),
              server: cpuSecondsOf(pid),
              pg: clusterCpuSeconds(postmaster),
            };
            const sample = await runLoad({
              port: server.port,
              connections: CONNECTIONS,
              seconds: seconds / slices,
              headers,
              nextPath: paths[scenario],
            });
            const load = process.cpuUsage(before.load);
            const used = cpu.get(`${scenario}/${flavour}`) ?? { load: 0, server: 0, postgres: 0 };
            cpu.set(`${scenario}/${flavour}`, {
              load: used.load + (load.user + load.system) / 1e6,
              server: used.server + cpuSecondsOf(pid) - before.server,
              postgres: used.postgres + clusterCpuSeconds(postmaster) - before.pg,
            });
            samples.set(flavour, [...(samples.get(flavour) ?? []), sample]);
          }
        }
        for (const [flavour, list] of samples) results.set(`${scenario}/${flavour}`, summarize(list));
      }
    } finally {
      for (const { server } of servers.values()) await stopServer(server);
    }

    const rows: [string, string][] = [
      [
        'mirror',
        `${total.toLocaleString('en')} listings (event 1: ${big.toLocaleString('en')}), ${events.toLocaleString('en')} events, loaded in ${loadSeconds.toFixed(1)} s`,
      ],
      ['load', `${CONNECTIONS} keep-alive connections, ${seconds} s per scenario, loopback`],
    ];
    const targets: { what: string; ok: boolean }[] = [];
    for (const scenario of SCENARIOS) {
      const base = results.get(`${scenario}/baseline`) as LoadResult;
      for (const flavour of ['baseline', 'cache off', 'cache on'] as const) {
        const r = results.get(`${scenario}/${flavour}`) as LoadResult;
        const ratio = flavour === 'baseline' ? '' : `  ratio ${(r.rps / base.rps).toFixed(2)}`;
        rows.push([
          `${scenario} ${flavour}`,
          `${Math.round(r.rps).toLocaleString('en')} req/s  p50 ${r.p50Ms.toFixed(2)} ms  p99 ${r.p99Ms.toFixed(2)} ms  errors ${r.errors}${ratio}`,
        ]);
        const used = cpu.get(`${scenario}/${flavour}`);
        if (used) {
          const perRequest = (cpuSeconds: number): string => ((cpuSeconds * 1000) / r.requests).toFixed(3);
          rows.push([
            `${scenario} ${flavour} CPU`,
            `ms per request: server ${perRequest(used.server)}  postgres ${perRequest(used.postgres)}  load generator ${perRequest(used.load)}`,
          ]);
        }
        targets.push({ what: `${scenario} ${flavour}: no errors`, ok: r.errors === 0 });
      }
      const off = results.get(`${scenario}/cache off`) as LoadResult;
      targets.push({ what: `${scenario} cache off >= 0.8x baseline req/s`, ok: off.rps >= 0.8 * base.rps });
      if (scenario !== 'R3') {
        const on = results.get(`${scenario}/cache on`) as LoadResult;
        targets.push({ what: `${scenario} cache on >= 1.5x baseline req/s`, ok: on.rps >= 1.5 * base.rps });
        targets.push({ what: `${scenario} cache on p99 <= baseline p99`, ok: on.p99Ms <= base.p99Ms });
      }
    }
    return { name: 'read API: events and listings from the mirror vs plain Fastify + pg', rows, targets };
  } finally {
    await pg.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
