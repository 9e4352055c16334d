import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generateApiKey } from '../../src/auth/api-key';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/sandbox.server';
import { syncServiceEnv } from '../support/catalog-mirror';
import { CHECKOUT_TEST_ENV, market, orderBody } from '../support/checkout-helpers';
import { spawnService, waitForExit, type ServiceProcess } from '../support/service-process';
import { createDatabaseFromTemplate, dropDatabase } from '../support/test-database';
import { waitUntil } from '../support/wait';

const TEN_MINUTES = 10 * 60_000;

/** The fields of the answers this test reads (orders, listings, sync passes). */
interface Body {
  id?: string;
  status?: string;
  state?: string;
  failure?: { code: string } | null;
  stale?: boolean;
  data_as_of?: string | null;
  passes?: { passId: string }[];
}

const listingPath = (l: { eventId: bigint; ticketId: bigint }, fresh = false): string =>
  `/v1/listings/${l.eventId}/${l.ticketId}${fresh ? '?fresh=true' : ''}`;
const FAKE_CLOCK = resolve(__dirname, '../support/fake-clock.cjs');

/**
 * Issue 23, item 7: one clock. Every time a replica compares with another replica's (or stamps for them) is the
 * database's: a replica whose wall clock runs ten minutes ahead or behind (a service process with its Date
 * shifted, test/support/fake-clock.cjs) must not hide later sync writes with a `?fresh=true` stamp from its
 * future, nor have a "gone" observation dropped as older than the row, nor give up on an order's revalidation
 * at once or never, nor call the mirror fresh or stale by its own clock.
 */
describe('One clock: a replica whose wall clock is ten minutes off (e2e, service processes)', () => {
  const adminUrl = inject('databaseAdminUrl');
  const apiKey = generateApiKey();
  let sandbox: SandboxHandle;
  const running: ServiceProcess[] = [];
  let n = 0;

  beforeAll(async () => {
    sandbox = await startSandbox({ host: '127.0.0.1', port: 0, seed: 'replica-clock', landingDelayMs: 20 });
  });
  afterAll(async () => {
    for (const p of running) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await sandbox?.close();
  });

  /** One replica on its own database, its wall clock `offsetMs` off; stopped (SIGTERM) after its block. */
  function replica(offsetMs: number, extra: Record<string, string>) {
    let databaseUrl = '';
    let proc: ServiceProcess | undefined;
    beforeAll(async () => {
      databaseUrl = await createDatabaseFromTemplate(adminUrl);
      proc = await spawnService(
        syncServiceEnv(databaseUrl, sandbox, {
          ...CHECKOUT_TEST_ENV,
          BFF_BOOTSTRAP_API_KEY: apiKey,
          SYNC_ENABLED: 'false',
          NODE_OPTIONS: `--require ${FAKE_CLOCK}`,
          FAKE_CLOCK_OFFSET_MS: String(offsetMs),
          ...extra,
        }),
        60_000,
      );
      running.push(proc);
    }, 90_000);
    afterAll(async () => {
      if (proc && proc.child.exitCode === null) {
        proc.child.kill('SIGTERM');
        await waitForExit(proc.child, 15_000);
      }
      if (databaseUrl) await dropDatabase(adminUrl, databaseUrl);
    });
    return {
      get url(): string {
        if (!proc) throw new Error('replica not started');
        return proc.url;
      },
      output: () => proc?.output() ?? '',
    };
  }

  const call = async (base: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(body === undefined
          ? {}
          : { 'content-type': 'application/json', 'idempotency-key': `clock-${++n}` }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    return { status: res.status, body: (await res.json()) as Body };
  };

  /** Runs one sync pass of `resource` (optionally one event's listings) on `base` and waits until it completed. */
  const syncPass = async (base: string, resource: 'all' | 'listings', eventId?: bigint) => {
    const started = await call(base, 'POST', '/v1/admin/sync', {
      resource,
      ...(eventId === undefined ? {} : { event_id: eventId.toString() }),
    });
    expect(started.status).toBe(202);
    for (const pass of started.body.passes ?? []) {
      await waitUntil(
        async () => (await call(base, 'GET', `/v1/admin/sync/${pass.passId}`)).body.status === 'completed',
        20_000,
      );
    }
  };

  /** A listing of a new event that expires half a minute from now on the sandbox's clock. */
  const expiringListing = () => {
    const { eventId } = sandbox.admin.createEvent();
    const view = sandbox.admin.seedListing({
      eventId,
      seller: { kind: 'user', subject: `seller-clock-${++n}` },
      askPriceMinor: 2_500_000n,
      expiresAt: BigInt(Math.floor(sandbox.admin.now() / 1000) + 30),
    });
    return { listing: { eventId, ticketId: BigInt(view.ticket_id) } };
  };

  /** The listing's answer once the replica knows of a completed pass (`data_as_of` set). */
  const mirroredAsOfPass = async (base: string, path: string) => {
    let body: Body = {};
    await waitUntil(async () => {
      const read = await call(base, 'GET', path);
      body = read.body;
      return read.status === 200 && typeof body.data_as_of === 'string';
    }, 10_000);
    return body;
  };

  describe('ten minutes ahead', () => {
    const ahead = replica(TEN_MINUTES, { SYNC_STALE_AFTER_MS: '120000' });

    it("a ?fresh=true stamp from the replica's future does not hide the next sync pass's removal", async () => {
      const { listing } = expiringListing();
      // Not mirrored yet: the live re-read inserts it, stamped with this replica's idea of now.
      const fresh = await call(ahead.url, 'GET', listingPath(listing, true));
      expect(fresh.status).toBe(200);

      // The listing goes (sold elsewhere), then a sync pass of its event runs (stamped by the database's clock).
      withdraw();
      await syncPass(ahead.url, 'listings', listing.eventId);

      const after = await call(ahead.url, 'GET', listingPath(listing));
      expect(after.status).toBe(410);
    });

    it("calls the mirror fresh right after a complete pass (its lag is measured on the database's clock)", async () => {
      const { listing } = expiringListing();
      await syncPass(ahead.url, 'all');
      const read = await mirroredAsOfPass(ahead.url, listingPath(listing));
      expect(read.stale).toBe(false);
    });

    it('does not give up on an order at its first failed revalidation (elapsed time is not ten minutes)', async () => {
      const { listing, buyer } = market(sandbox, `clock-ahead-${++n}`);
      sandbox.admin.fund({ kind: 'user', subject: buyer.subject }, listing.askPriceMinor);
      // Every listings read fails for a while: the first revalidations fail, then the upstream comes back.
      sandbox.admin.setFaults([{ operation: 'listings', kind: 'error', status: 503 }], 'clock');
      const posted = await call(ahead.url, 'POST', '/v1/orders', orderBody(listing, buyer));
      expect(posted.status).toBe(202);
      await new Promise((r) => setTimeout(r, 2_500));
      sandbox.admin.clearFaults();

      let order: Body = {};
      await waitUntil(async () => {
        order = (await call(ahead.url, 'GET', `/v1/orders/${posted.body.id}`)).body;
        return ['confirmed', 'rejected', 'failed', 'landed_with_error'].includes(order.state ?? '');
      }, 30_000);
      expect({ state: order.state, code: order.failure?.code ?? null }).toEqual({
        state: 'confirmed',
        code: null,
      });
    });
  });

  describe('ten minutes behind', () => {
    const behind = replica(-TEN_MINUTES, {
      SYNC_STALE_AFTER_MS: '1000',
      CHECKOUT_REVALIDATE_GIVE_UP_MS: '2000',
    });

    it('a live re-read that finds the listing gone removes it from the mirror (the stamp is not ten minutes old)', async () => {
      const { listing } = expiringListing();
      await syncPass(behind.url, 'listings', listing.eventId);
      expect((await call(behind.url, 'GET', listingPath(listing))).status).toBe(200);

      withdraw();
      const fresh = await call(behind.url, 'GET', listingPath(listing, true));
      expect(fresh.status).toBe(410);
      expect((await call(behind.url, 'GET', listingPath(listing))).status).toBe(410);
    });

    it('calls the mirror stale once its last pass is older than the threshold', async () => {
      const { listing } = expiringListing();
      await syncPass(behind.url, 'all');
      const asOf = (await mirroredAsOfPass(behind.url, listingPath(listing))).data_as_of;
      await new Promise((r) => setTimeout(r, 1_500));
      const read = await call(behind.url, 'GET', listingPath(listing));
      expect(read.body).toMatchObject({ data_as_of: asOf, stale: true });
    });

    it('gives up on an order whose listing cannot be checked within the give-up time (not ten minutes later)', async () => {
      const { listing, buyer } = market(sandbox, `clock-behind-${++n}`);
      sandbox.admin.setFaults([{ operation: 'listings', kind: 'error', status: 503 }], 'clock');
      try {
        const posted = await call(behind.url, 'POST', '/v1/orders', orderBody(listing, buyer));
        expect(posted.status).toBe(202);
        let order: Body = {};
        await waitUntil(async () => {
          order = (await call(behind.url, 'GET', `/v1/orders/${posted.body.id}`)).body;
          return order.state === 'failed';
        }, 20_000);
        expect(order.failure?.code).toBe('UPSTREAM_UNAVAILABLE');
      } finally {
        sandbox.admin.clearFaults();
      }
    });
  });

  /** The expiring listings stop being active on the sandbox: its clock moves past their expiry. */
  function withdraw(): void {
    sandbox.admin.advanceTime(60_000);
  }
});
