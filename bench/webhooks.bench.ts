import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { Client } from 'pg';
import { Webhook } from 'standardwebhooks';
import { generateApiKey } from '../src/auth/api-key';
import { WebhooksConfig } from '../src/config/webhooks.config';
import { provisionDatabase, type ChaosDatabase } from './chaos/database';
import { percentile, seededRandom } from './chaos/orders-client';
import { ProcessGroup, sleep, waitFor } from './chaos/processes';
import { SandboxProcess } from './chaos/sandbox-process';
import { replicaEnv } from './chaos/service-env';
import { ServiceReplica } from './chaos/service-replica';
import { startHookServer, verifiedEnvelope, type HookServer } from './chaos/webhook-receiver';
import { printPgStats } from './pg-stats';
import type { BenchReport } from './report';

const ENDPOINTS = 10;
/** The producer appends what is due every this long (one statement per tick). */
const PRODUCER_TICK_MS = 50;
/** After the last event, how long the fast endpoints may take to receive every one (bounded wait). */
const DRAIN_TIMEOUT_MS = 120_000;
const TARGET_RATE = 1_000;
const TARGET_P99_MS = 1_000;

export interface WebhooksBenchOptions {
  /** Seconds the producer runs (BENCH_WEBHOOKS_SECONDS, default 30). */
  seconds: number;
  /** Events/s offered to the nine fast endpoints together (BENCH_WEBHOOKS_RATE, default 1,200). */
  rate: number;
  /** Events/s offered to the slow endpoint (BENCH_WEBHOOKS_SLOW_RATE, default 20: far above what it takes). */
  slowRate: number;
  /** The slow receiver answers after this long, ± a third of it (BENCH_WEBHOOKS_SLOW_MS, default 2,500 ms). */
  slowMs: number;
  /** Seconds at the start left out of the steady-state figures (BENCH_WEBHOOKS_WARMUP, default 5). */
  warmupSeconds: number;
}

function envNumber(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!(Number.isFinite(value) && value >= min && value <= max)) throw new Error(`${name}: ${min}..${max}`);
  return value;
}

export function webhooksBenchOptions(): WebhooksBenchOptions {
  const seconds = envNumber('BENCH_WEBHOOKS_SECONDS', 30, 5, 3_600);
  return {
    seconds,
    rate: envNumber('BENCH_WEBHOOKS_RATE', 1_200, 1, 100_000),
    slowRate: envNumber('BENCH_WEBHOOKS_SLOW_RATE', 20, 0, 10_000),
    slowMs: envNumber('BENCH_WEBHOOKS_SLOW_MS', 2_500, 0, 8_000),
    warmupSeconds: envNumber('BENCH_WEBHOOKS_WARMUP', Math.min(5, Math.floor(seconds / 4)), 0, seconds - 1),
  };
}

/** What one loopback receiver saw: every verified delivery's arrival, by event id. */
class BenchReceiver {
  /** Event id → arrival times (ms, this process's clock); more than one is a duplicate. */
  readonly arrivals = new Map<string, number[]>();
  /** Event id → its envelope's occurred_at (ms): the enqueue time, on the database's clock (same host). */
  readonly occurredAt = new Map<string, number>();
  requests = 0;
  badSignatures = 0;
  private verifier: Webhook | null = null;
  private readonly timers = new Set<NodeJS.Timeout>();
  private hooks: HookServer | null = null;

  constructor(
    readonly index: number,
    private readonly slowMs: number,
    private readonly rng: () => number,
  ) {}

  get slow(): boolean {
    return this.slowMs > 0;
  }

  get url(): string {
    if (!this.hooks) throw new Error('receiver not started');
    return this.hooks.url;
  }

  async start(): Promise<void> {
    this.hooks = await startHookServer((headers, body, res) => {
      this.requests++;
      const envelope = this.verifier ? verifiedEnvelope(this.verifier, headers, body) : null;
      if (!envelope) {
        this.badSignatures++;
        res.writeHead(400).end('bad signature');
        return;
      }
      const at = Date.now();
      const list = this.arrivals.get(envelope.id);
      if (list) list.push(at);
      else {
        this.arrivals.set(envelope.id, [at]);
        this.occurredAt.set(envelope.id, Date.parse(envelope.occurred_at));
      }
      this.answer(res);
    });
  }

  verifyWith(secret: string): void {
    this.verifier = new Webhook(secret);
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    await this.hooks?.close();
  }

  private answer(res: ServerResponse): void {
    if (!this.slow) {
      res.writeHead(204).end();
      return;
    }
    // 2–3 s by default: below the send timeout, so each is one delivered try (slow, never failed).
    const delay = this.slowMs * (2 / 3 + (this.rng() * 2) / 3);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      res.writeHead(204).end();
    }, delay);
    this.timers.add(timer);
  }
}

async function post<T>(url: string, key: string, body: unknown): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`POST ${url}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

/**
 * The producer: the service's own outbox function, `outbox_append` (every trigger calls it; WebhooksService.append
 * runs it too), called straight from the bench — the cheapest realistic producer, since what is measured is
 * outbox → receiver: each event and its delivery row are written exactly as a trigger writes them, without orders
 * or sync passes competing for the two cores. One statement per tick appends every event due by then (an open
 * loop at the offered rate, so a slow service shows as a backlog, not as a slower producer).
 */
class Producer {
  readonly ids: string[][] = Array.from({ length: ENDPOINTS }, () => []);
  /** Events appended, and how far behind its schedule the producer fell at worst (ms). */
  produced = 0;
  lagMs = 0;

  constructor(
    private readonly db: Client,
    private readonly clients: string[],
    private readonly rates: number[],
  ) {}

  async run(seconds: number): Promise<{ startMs: number; endMs: number }> {
    const startMs = Date.now();
    const owed = this.rates.map(() => 0);
    const done = this.rates.map(() => 0);
    const endMs = startMs + seconds * 1_000;
    for (let tick = 0; tick < seconds * (1_000 / PRODUCER_TICK_MS) + 10; tick++) {
      const now = Math.min(Date.now(), endMs);
      const ids: string[] = [];
      const owners: string[] = [];
      for (let e = 0; e < ENDPOINTS; e++) {
        owed[e] = Math.floor((this.rates[e] * (now - startMs)) / 1_000);
        for (; done[e] < owed[e]; done[e]++) {
          const id = `evt_${randomBytes(16).toString('hex')}`;
          this.ids[e].push(id);
          ids.push(id);
          owners.push(this.clients[e]);
        }
      }
      if (ids.length > 0) {
        // An order.confirmed-shaped payload (the commonest event of a busy marketplace), built in SQL.
        await this.db.query(
          `SELECT outbox_append(u.id, 'order.confirmed', 1::smallint, u.client, jsonb_build_object(
             'order_id', gen_random_uuid(), 'state', 'confirmed', 'attempt', 1, 'event_id', '7000001',
             'ticket_id', u.n::text, 'price_minor', '15000000', 'failure', NULL,
             'transaction_signature', md5(u.id)))
           FROM unnest($1::text[], $2::uuid[]) WITH ORDINALITY AS u(id, client, n)`,
          [ids, owners],
        );
        this.produced += ids.length;
      }
      if (now >= endMs) break;
      const next = startMs + (tick + 1) * PRODUCER_TICK_MS;
      const wait = next - Date.now();
      if (wait > 0) await sleep(wait);
      else this.lagMs = Math.max(this.lagMs, -wait);
    }
    return { startMs, endMs: Date.now() };
  }
}

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ: 100 on Linux). */
const USER_HZ = 100;

/** CPU seconds (user + system) a process has used, from /proc (null when gone or not Linux). */
function cpuSecondsOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / USER_HZ;
  } catch {
    return null;
  }
}

/** The PIDs whose parent is `ppid` (the postmaster's backends and workers). */
function childrenOf(ppid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === ppid) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/**
 * CPU seconds used by each side of the run (the replicas, PostgreSQL, this process: producer and receivers), read
 * from /proc at two instants: on a machine shared with other work the events/s depend on the load, the CPU spent per
 * delivery does not (much). PostgreSQL's share counts the postmaster's processes alive at both instants (the pools'
 * connections live through the run).
 */
class CpuMeter {
  private start = new Map<number, number>();

  constructor(
    private readonly replicas: number[],
    private readonly postmaster: number | null,
  ) {}

  mark(): void {
    this.start = this.sample();
  }

  /** CPU seconds since mark(), by side. */
  used(): { replicas: number; postgres: number; bench: number } {
    const now = this.sample();
    const delta = (pid: number): number =>
      Math.max(0, (now.get(pid) ?? 0) - (this.start.get(pid) ?? now.get(pid) ?? 0));
    const pg = this.postmaster === null ? [] : [this.postmaster, ...childrenOf(this.postmaster)];
    return {
      replicas: this.replicas.reduce((n, pid) => n + delta(pid), 0),
      postgres: pg.reduce((n, pid) => n + delta(pid), 0),
      bench: delta(process.pid),
    };
  }

  private sample(): Map<number, number> {
    const pids = [...this.replicas, process.pid];
    if (this.postmaster !== null) pids.push(this.postmaster, ...childrenOf(this.postmaster));
    const map = new Map<number, number>();
    for (const pid of pids) {
      const cpu = cpuSecondsOf(pid);
      if (cpu !== null) map.set(pid, cpu);
    }
    return map;
  }
}

/** The postmaster's PID of the database the bench runs on, when it runs on this host (else null: not measured). */
async function postmasterOf(db: Client): Promise<number | null> {
  try {
    const { rows } = await db.query<{ dir: string }>(`SELECT current_setting('data_directory') AS dir`);
    const pid = Number.parseInt(
      readFileSync(`${rows[0].dir}/postmaster.pid`, 'utf8').split('\n')[0] ?? '',
      10,
    );
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** The CPU row: ms per delivery received, by side, and the seconds behind them. */
function cpuPerDelivery(
  used: { replicas: number; postgres: number; bench: number },
  received: number,
): string {
  const per = (s: number): string => (received > 0 ? ((s * 1_000) / received).toFixed(2) : 'n/a');
  const total = used.replicas + used.postgres + used.bench;
  return `${per(total)} ms (replicas ${per(used.replicas)}, PostgreSQL ${per(used.postgres)}, bench producer + receivers ${per(used.bench)}) over ${received} deliveries: ${total.toFixed(1)} CPU s (${used.replicas.toFixed(1)} / ${used.postgres.toFixed(1)} / ${used.bench.toFixed(1)})`;
}

const ms = (v: number): string => (Number.isFinite(v) ? `${Math.round(v)} ms` : 'n/a');

interface ClassFigures {
  produced: number;
  received: number;
  duplicates: number;
  latencies: number[];
}

function classFigures(
  receivers: BenchReceiver[],
  producer: Producer,
  window: { fromMs: number; toMs: number },
): ClassFigures {
  const figures: ClassFigures = { produced: 0, received: 0, duplicates: 0, latencies: [] };
  for (const r of receivers) {
    figures.produced += producer.ids[r.index].length;
    figures.received += r.arrivals.size;
    for (const [id, times] of r.arrivals) {
      figures.duplicates += times.length - 1;
      const occurred = r.occurredAt.get(id) ?? Number.NaN;
      // Latency of the events enqueued in the steady window (the ramp's are left out).
      if (occurred >= window.fromMs && occurred <= window.toMs) figures.latencies.push(times[0] - occurred);
    }
  }
  return figures;
}

/**
 * `npm run bench -- webhooks` (issues 32 and 34): events/s sustained from the outbox to loopback receivers — two
 * real service replicas on one database, 10 endpoints (one per API client), one of them slow — and enqueue → sent
 * latency per endpoint class. docs/BENCHMARKS.md › Webhook delivery.
 */
export async function benchWebhooks(options = webhooksBenchOptions()): Promise<BenchReport> {
  const group = new ProcessGroup();
  let database: ChaosDatabase | null = null;
  const rng = seededRandom('webhooks-bench');
  const receivers = Array.from(
    { length: ENDPOINTS },
    (_, i) => new BenchReceiver(i, i === ENDPOINTS - 1 ? options.slowMs : 0, rng),
  );
  let db: Client | null = null;
  try {
    database = await provisionDatabase(process.env.DATABASE_URL || undefined);
    const sandbox = await SandboxProcess.start(group, { seed: 'webhooks-bench', events: 1, listings: 10 });
    const adminKey = generateApiKey();
    // The webhook settings at their defaults (interval, concurrency, caps, timeout, lease): the service as deployed.
    // replicaEnv shortens them for the chaos run; here they are what is measured.
    const defaults = new WebhooksConfig();
    const env = replicaEnv({
      databaseUrl: database.url,
      sandboxUrl: sandbox.url,
      apiKey: adminKey,
      extra: {
        SYNC_ENABLED: 'false',
        SYNC_ON_STARTUP: 'false',
        WEBHOOKS_WORKER_INTERVAL_MS: String(defaults.WEBHOOKS_WORKER_INTERVAL_MS),
        WEBHOOKS_WORKER_CONCURRENCY: String(defaults.WEBHOOKS_WORKER_CONCURRENCY),
        WEBHOOKS_DELIVERY_TIMEOUT_MS: String(defaults.WEBHOOKS_DELIVERY_TIMEOUT_MS),
        WEBHOOKS_LEASE_MS: String(defaults.WEBHOOKS_LEASE_MS),
        // BENCH_WEBHOOKS_ENV='K=V,K=V': settings of both replicas (a knob's effect, e.g. the worker's concurrency).
        ...Object.fromEntries(
          (process.env.BENCH_WEBHOOKS_ENV ?? '')
            .split(',')
            .filter((kv) => kv.includes('='))
            .map((kv) => [kv.slice(0, kv.indexOf('=')).trim(), kv.slice(kv.indexOf('=') + 1).trim()]),
        ),
      },
    });
    // BENCH_WEBHOOKS_CPU_PROF=<dir>: a V8 CPU profile of replica A, written when it stops.
    const profDir = process.env.BENCH_WEBHOOKS_CPU_PROF;
    const a = await ServiceReplica.create('hooks-A', group, {
      ...env,
      ...(profDir ? { BENCH_CPU_PROF_DIR: profDir } : {}),
    });
    const b = await ServiceReplica.create('hooks-B', group, env);
    // A migrates first; B starts on the migrated database.
    await a.start({}, 120_000);
    await b.start({}, 120_000);

    // One API client per endpoint (each client's share is its own: the client cap does not pool them).
    const clients: string[] = [];
    for (const receiver of receivers) {
      await receiver.start();
      const client = await post<{ id: string; key: string }>(`${a.url}/v1/admin/api-clients`, adminKey, {
        name: `bench-hooks-${receiver.index}`,
        scopes: ['webhooks:write'],
      });
      const endpoint = await post<{ secret: string }>(`${a.url}/v1/webhooks/endpoints`, client.key, {
        url: receiver.url,
        description: receiver.slow ? 'bench slow receiver' : 'bench receiver',
      });
      receiver.verifyWith(endpoint.secret);
      clients.push(client.id);
    }

    db = new Client({ connectionString: database.url });
    await db.connect();
    const fast = receivers.filter((r) => !r.slow);
    const slow = receivers.filter((r) => r.slow);
    const rates = receivers.map((r) => (r.slow ? options.slowRate : options.rate / fast.length));
    const producer = new Producer(db, clients, rates);
    const cpu = new CpuMeter(
      [a.proc?.pid, b.proc?.pid].filter((pid) => pid !== undefined),
      await postmasterOf(db),
    );
    cpu.mark();
    const run = await producer.run(options.seconds);
    const window = { fromMs: run.startMs + options.warmupSeconds * 1_000, toMs: run.endMs };

    // Every fast event received (bounded): the tail of the run, then the accounting.
    const fastProduced = fast.reduce((n, r) => n + producer.ids[r.index].length, 0);
    const drainStart = Date.now();
    await waitFor(
      'every fast endpoint event received',
      () => fast.reduce((n, r) => n + r.arrivals.size, 0) >= fastProduced,
      DRAIN_TIMEOUT_MS,
      100,
    ).catch(() => undefined);
    const drainMs = Date.now() - drainStart;
    const cpuUsed = cpu.used();

    // Steady state: fast deliveries that arrived in the window (first arrivals), per second.
    let inWindow = 0;
    for (const r of fast)
      for (const times of r.arrivals.values())
        if (times[0] >= window.fromMs && times[0] <= window.toMs) inWindow++;
    const windowS = (window.toMs - window.fromMs) / 1_000;
    const steadyRate = inWindow / windowS;
    const fastFig = classFigures(fast, producer, window);
    const slowFig = classFigures(slow, producer, window);

    // The database's account of what was not received: still pending (a backlog, e.g. the slow endpoint's), not
    // lost. Lost = appended, never received, and not pending either (an event is counted once per endpoint).
    const { rows: statusRows } = await db.query<{
      slow: boolean;
      status: string;
      n: number;
      retried: number;
    }>(
      `SELECT e.url = ANY ($1::text[]) AS slow, d.status, count(*)::int AS n,
         count(*) FILTER (WHERE d.attempts > 1)::int AS retried
       FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id GROUP BY 1, 2`,
      [slow.map((r) => r.url)],
    );
    const count = (isSlow: boolean, status: string): number =>
      statusRows.find((r) => r.slow === isSlow && r.status === status)?.n ?? 0;
    const retried = statusRows.reduce((n, r) => n + r.retried, 0);
    const { rows: pendingRows } = await db.query<{ event_id: string }>(
      `SELECT event_id FROM webhook_deliveries WHERE status = 'pending'`,
    );
    const pending = new Set(pendingRows.map((r) => r.event_id));
    const lostOf = (list: BenchReceiver[]): number =>
      list.reduce(
        (n, r) => n + producer.ids[r.index].filter((id) => !r.arrivals.has(id) && !pending.has(id)).length,
        0,
      );
    const fastLost = lostOf(fast);
    const slowLost = lostOf(slow);
    const lost = fastLost + slowLost;
    const slowPending = count(true, 'pending');
    const badSignatures = receivers.reduce((n, r) => n + r.badSignatures, 0);
    const perEndpoint = fast.map((r) => {
      const lat: number[] = [];
      for (const [id, times] of r.arrivals) {
        const occurred = r.occurredAt.get(id) ?? Number.NaN;
        if (occurred >= window.fromMs && occurred <= window.toMs) lat.push(times[0] - occurred);
      }
      return percentile(lat, 99);
    });
    const p50 = percentile(fastFig.latencies, 50);
    const p99 = percentile(fastFig.latencies, 99);
    await printPgStats(db);

    const rows: [string, string][] = [
      [
        'setup',
        `2 replicas on one database, ${ENDPOINTS} endpoints (one per API client) on loopback receivers verifying every signature; endpoint ${ENDPOINTS} answers after ${options.slowMs} ms ± ⅓; webhook settings at their defaults${process.env.BENCH_WEBHOOKS_ENV ? ` but ${process.env.BENCH_WEBHOOKS_ENV}` : ''}`,
      ],
      [
        'offered (outbox_append from the bench)',
        `${options.rate}/s to the 9 fast endpoints, ${options.slowRate}/s to the slow one, for ${options.seconds} s: ${producer.produced} events appended (producer behind its schedule by at most ${ms(producer.lagMs)})`,
      ],
      [
        'delivered, fast endpoints (steady)',
        `${steadyRate.toFixed(0)} events/s over ${windowS.toFixed(1)} s (the first ${options.warmupSeconds} s left out); ${fastFig.received} of ${fastFig.produced} received ${drainMs} ms after the last append${fastFig.received < fastFig.produced ? ` (the bounded wait ran out: ${count(false, 'pending')} still pending)` : ''}`,
      ],
      [
        'enqueue → sent, fast endpoints',
        `p50 ${ms(p50)}, p99 ${ms(p99)}, max ${ms(fastFig.latencies.length > 0 ? Math.max(...fastFig.latencies) : Number.NaN)} over ${fastFig.latencies.length} events; p99 per endpoint ${perEndpoint.map((v) => Math.round(v)).join(' / ')} ms`,
      ],
      [
        'enqueue → sent, slow endpoint',
        `p50 ${ms(percentile(slowFig.latencies, 50))}, p99 ${ms(percentile(slowFig.latencies, 99))} over ${slowFig.latencies.length} events; ${slowFig.received} of ${slowFig.produced} received, ${slowPending} pending at the end (its backlog: 4 in flight × ~${options.slowMs} ms)`,
      ],
      [
        'CPU per delivery (all of it, producer to drain)',
        cpuPerDelivery(cpuUsed, fastFig.received + slowFig.received),
      ],
      [
        'lost / duplicated',
        `lost ${lost} (fast ${fastLost}, slow ${slowLost}); duplicates ${fastFig.duplicates + slowFig.duplicates}; deliveries tried more than once ${retried}; bad signatures ${badSignatures}; failed ${count(false, 'failed') + count(true, 'failed')}`,
      ],
    ];
    return {
      name: `webhooks: outbox → 10 loopback endpoints (one slow), 2 replicas, ${options.seconds} s`,
      rows,
      targets: [
        {
          what: `fast endpoints delivered ${steadyRate.toFixed(0)} events/s sustained ≥ ${TARGET_RATE}/s`,
          ok: steadyRate >= TARGET_RATE,
        },
        {
          what: `enqueue → sent p99 (fast endpoints) ${ms(p99)} < ${TARGET_P99_MS} ms, every event received`,
          ok: p99 < TARGET_P99_MS && fastFig.received === fastFig.produced,
        },
        { what: `deliveries lost ${lost} = 0`, ok: lost === 0 },
        { what: `bad signatures ${badSignatures} = 0`, ok: badSignatures === 0 },
      ],
    };
  } finally {
    await db?.end().catch(() => undefined);
    await group.stopAll();
    for (const receiver of receivers) await receiver.close().catch(() => undefined);
    await database?.close().catch(() => undefined);
  }
}
