import { Pool } from 'pg';
import { afterAll, beforeAll, inject } from 'vitest';
import { generateApiKey } from '../../src/auth/api-key';
import { verifyMirror, type VerifyFindings } from '../../src/catalog-sync/sync-verify';
import { OffsetClock } from '../../src/sandbox/sandbox.clock';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/sandbox.server';
import { UpstreamClient } from '../../src/upstream/upstream.client';
import { pgQuery, syncServiceEnv } from './catalog-mirror';
import { CountingProxy } from './counting-proxy';
import { cancelListingBatch, land, signAndSubmit, userWallet, type Wallet } from './market';
import { spawnService, waitForExit, type ServiceProcess } from './service-process';
import { createDatabaseFromTemplate, dropDatabase } from './test-database';
import { waitUntil } from './wait';

/** One `event_listings` pass of an event as `sync_passes` records it. */
export interface WalkRow {
  id: string;
  holder: string;
  status: string;
  trigger: string;
  pages: number;
  error: string | null;
  started_at: Date;
  finished_at: Date | null;
}

/** A service replica of the rig: the process, its bootstrap admin key's headers, its counting proxy if any. */
export interface Replica extends ServiceProcess {
  proxy: CountingProxy | null;
}

/** The listings of one busy event the test seeded itself (one seller, so the test can cancel them upstream). */
export interface BusyEvent {
  eventId: bigint;
  seller: Wallet;
  /** ticket id → price (minor units), as seeded. */
  listings: Map<bigint, bigint>;
}

/**
 * The set-up of the live-catalog tests across processes (issue 30): one database copied from the template,
 * one in-process sandbox (frozen clock, so the test moves time), built service processes syncing from it (each
 * optionally behind its own CountingProxy, to count what the upstream saw from it), and a test-side upstream
 * client to change the upstream (cancel, reprice, list) and to run `sync:verify`'s comparison. Everything
 * started is stopped (kill -9) and dropped after the file.
 */
export class LiveCatalogRig {
  readonly apiKey = generateApiKey();
  readonly replicas: Replica[] = [];
  databaseUrl = '';
  sandbox!: SandboxHandle;
  upstream!: UpstreamClient;
  readonly query = pgQuery(() => this.databaseUrl);
  private nextKey = 0;

  /** The environment of a replica: the test's admin key, reads unthrottled, sync settings for live tests. */
  env(extra: Record<string, string>, upstreamUrl = this.sandbox.url): Record<string, string> {
    return syncServiceEnv(
      this.databaseUrl,
      { url: upstreamUrl, admin: this.sandbox.admin },
      {
        BFF_BOOTSTRAP_API_KEY: this.apiKey,
        RATE_LIMIT_CATALOG_READ: '100000',
        SYNC_EVENTS_INTERVAL_MS: '3600000',
        SYNC_LISTINGS_INTERVAL_MS: '3600000',
        SYNC_HOT_STARTS_WITHIN_MS: '0',
        ...extra,
      },
    );
  }

  /** Starts a replica (through a counting proxy of its own with `counted`). */
  async spawn(extra: Record<string, string>, { counted = false } = {}): Promise<Replica> {
    const proxy = counted ? await CountingProxy.start(this.sandbox.url) : null;
    const child = await spawnService(this.env(extra, proxy?.url), 60_000);
    const replica = { ...child, proxy };
    this.replicas.push(replica);
    return replica;
  }

  async kill9(replica: Replica): Promise<void> {
    replica.child.kill('SIGKILL');
    await waitForExit(replica.child, 10_000);
  }

  /** GET on a replica with the admin key (catalog:read included). */
  get(replica: Replica, path: string, timeoutMs = 15_000): Promise<Response> {
    return fetch(`${replica.url}${path}`, {
      headers: { authorization: `Bearer ${this.apiKey}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
  }

  /** POST of a JSON body on a replica with the admin key (e.g. `/v1/admin/sync`). */
  post(replica: Replica, path: string, body: unknown): Promise<Response> {
    return fetch(`${replica.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
  }

  /** Whether a pass row's holder is this replica (holder = `host:pid:random`, DurableWorkService.instanceId). */
  isHolder(replica: Replica, holder: string): boolean {
    return holder.split(':')[1] === String(replica.child.pid);
  }

  /** Waits until a full listings pass has completed (the startup sync of some replica). */
  async fullPassCompleted(timeoutMs = 60_000): Promise<void> {
    await waitUntil(
      async () =>
        (
          await this.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM sync_passes WHERE resource = 'listings' AND status = 'completed'`,
          )
        )[0]?.n >= 1,
      timeoutMs,
      100,
    );
  }

  /** Every `event_listings` pass of the event, in start order. */
  walksOf(eventId: bigint | string): Promise<WalkRow[]> {
    return this.query<WalkRow>(
      `SELECT id::text, holder, status, trigger, pages::int AS pages, error, started_at, finished_at FROM sync_passes
       WHERE resource = 'event_listings' AND scope_event_id = $1 ORDER BY started_at, id`,
      [eventId.toString()],
    );
  }

  /**
   * `npm run sync:verify`'s comparison (src/catalog-sync/sync-verify.ts) of the whole mirror with the upstream
   * now, faults off meanwhile: missing / extra / differing counts per resource.
   */
  async verify(): Promise<VerifyFindings[]> {
    const faults = this.sandbox.admin.faults();
    this.sandbox.admin.clearFaults();
    const pool = new Pool({ connectionString: this.databaseUrl, max: 2 });
    try {
      return await verifyMirror(pool, this.upstream, 1000);
    } finally {
      await pool.end();
      this.sandbox.admin.setFaults(faults);
    }
  }

  /** A new event with `count` listings of one seller (prices 1,000,000 + i · 10,000 minor units). */
  seedBusyEvent(count: number, name = 'Busy event'): BusyEvent {
    const { eventId } = this.sandbox.admin.createEvent({ name });
    const subject = `busy-seller-${eventId}`;
    const listings = new Map<bigint, bigint>();
    for (let i = 0; i < count; i++)
      this.list({ eventId, seller: userWallet(this.sandbox, subject), listings });
    return { eventId, seller: userWallet(this.sandbox, subject), listings };
  }

  /** A new listing on the busy event (a new ticket of its seller), straight on the sandbox's ledger. */
  list(event: BusyEvent, price = 1_000_000n + BigInt(event.listings.size) * 10_000n): bigint {
    const view = this.sandbox.admin.seedListing({
      eventId: event.eventId,
      seller: { kind: 'user', subject: event.seller.subject },
      askPriceMinor: price,
    });
    const ticketId = BigInt(view.ticket_id);
    event.listings.set(ticketId, price);
    return ticketId;
  }

  /** Cancels a listing upstream as its seller would (signed, submitted, landed): no replica sees it happen. */
  async cancel(event: BusyEvent, ticketId: bigint): Promise<void> {
    const { signed } = await signAndSubmit(
      this.upstream,
      event.seller,
      cancelListingBatch(event.eventId, ticketId, event.seller),
      `live-rig-cancel-${this.nextKey++}`,
    );
    const landed = await land(this.sandbox, this.upstream, signed);
    if (landed.status !== 'confirmed') throw new Error(`cancel of ${ticketId} ${landed.status}`);
    event.listings.delete(ticketId);
  }

  /** Relists a listing at another price (cancelled, then listed again: same ticket, new price). */
  async reprice(event: BusyEvent, ticketId: bigint, price: bigint): Promise<void> {
    await this.cancel(event, ticketId);
    this.sandbox.admin.seedListing({
      eventId: event.eventId,
      ticketId,
      seller: { kind: 'user', subject: event.seller.subject },
      askPriceMinor: price,
    });
    event.listings.set(ticketId, price);
  }

  /** The event's active mirror rows: ticket id → price. */
  async mirrorOf(eventId: bigint): Promise<Map<bigint, bigint>> {
    const rows = await this.query<{ t: string; p: string }>(
      `SELECT ticket_id::text AS t, ask_price_minor::text AS p FROM listings
       WHERE event_id = $1 AND removed_at IS NULL`,
      [eventId.toString()],
    );
    return new Map(rows.map((r) => [BigInt(r.t), BigInt(r.p)]));
  }
}

/** Problems sync:verify found, per resource and kind; `[]` when the mirror equals the upstream. */
export function differences(findings: readonly VerifyFindings[]): string[] {
  return findings.flatMap((f) =>
    (['missing', 'extra', 'differing'] as const)
      .filter((kind) => f[kind].count > 0)
      .map((kind) => `${f.resource}: ${f[kind].count} ${kind} (${f[kind].sample.slice(0, 5).join(', ')})`),
  );
}

/** Pairs of walks of one event that overlapped in time (each should start after the previous one finished). */
export function overlappingWalks(walks: readonly WalkRow[]): [WalkRow, WalkRow][] {
  const sorted = [...walks].sort((a, b) => a.started_at.getTime() - b.started_at.getTime());
  const out: [WalkRow, WalkRow][] = [];
  for (let i = 1; i < sorted.length; i++) {
    const previous = sorted[i - 1];
    const walk = sorted[i];
    if (previous.finished_at === null || previous.finished_at > walk.started_at) out.push([previous, walk]);
  }
  return out;
}

/**
 * The rig of the enclosing describe block: database and sandbox in beforeAll, every replica killed (-9), every
 * proxy closed, the sandbox closed and the database dropped in afterAll. Returns the rig (usable in tests).
 */
export function useLiveCatalogRig(sandbox: {
  seed: string;
  events: number;
  listings: number;
}): LiveCatalogRig {
  const rig = new LiveCatalogRig();
  const adminUrl = inject('databaseAdminUrl');
  beforeAll(async () => {
    rig.databaseUrl = await createDatabaseFromTemplate(adminUrl);
    rig.sandbox = await startSandbox({
      host: '127.0.0.1',
      port: 0,
      ...sandbox,
      clock: new OffsetClock({ frozen: true, startMs: Date.UTC(2030, 0, 1) }),
    });
    rig.upstream = UpstreamClient.create({
      baseUrl: rig.sandbox.url,
      apiKey: rig.sandbox.admin.apiKey,
      environment: 'sandbox',
      logger: { info: () => undefined, warn: () => undefined },
    });
  });
  afterAll(async () => {
    const alive = rig.replicas.filter((r) => r.child.exitCode === null && r.child.signalCode === null);
    for (const r of alive) r.child.kill('SIGKILL');
    await Promise.all(alive.map((r) => waitForExit(r.child, 10_000).catch(() => null)));
    await Promise.all(rig.replicas.flatMap((r) => (r.proxy === null ? [] : [r.proxy.close()])));
    rig.upstream?.close();
    await rig.sandbox?.close();
    if (rig.databaseUrl) await dropDatabase(adminUrl, rig.databaseUrl);
  });
  return rig;
}
