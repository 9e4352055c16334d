import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ProcessGroup, waitForExit, type Managed } from '../../bench/chaos/processes';
import { SandboxProcess } from '../../bench/chaos/sandbox-process';
import { replicaEnv } from '../../bench/chaos/service-env';
import { ServiceReplica } from '../../bench/chaos/service-replica';
import { generateApiKey } from '../../src/auth/api-key';
import { fundedOrderBody } from '../support/checkout-helpers';
import { createDatabaseFromTemplate, dropDatabase } from '../support/test-database';
import { waitUntil } from '../support/wait';

/**
 * A's drain: every step of the test up to its last readiness check (readiness wait, a POST, B's crash, 1.5 s of
 * lease expiry, the reads) must fit inside it, with room for a loaded machine.
 */
const DRAIN_MS = 20_000;
const PRICE_MINOR = 3_000_000n;

interface OrderRow {
  id: string;
  lease_owner: string | null;
  lease_token: string;
  expired_for_ms: number;
}

/**
 * The shutdown drain claims no background work (docs/DEPLOY.md, docs/durable-work.md): two real replicas on one
 * database. A (recovery worker polling every 100 ms, a 20 s drain) gets SIGTERM; during its drain an order becomes
 * due — B inserts it and dies right after the commit (a crash point), so the order's short lease runs out — and A
 * must not claim it, while a POST /v1/orders that A serves during the drain is still accepted and bought. A exits
 * 0; B, restarted with its worker on, takes the order over and buys it.
 */
describe('shutdown drain: no new background claims (e2e, two replicas)', () => {
  const group = new ProcessGroup();
  const apiKey = generateApiKey();
  let sandbox: SandboxProcess;
  let a: ServiceReplica;
  let b: ServiceReplica;
  let db: Client;
  let databaseUrl = '';
  let nextEvent = 8_800_000n;

  beforeAll(async () => {
    sandbox = await SandboxProcess.start(group, { seed: 'drain-claims', events: 2, listings: 10 });
    databaseUrl = await createDatabaseFromTemplate(inject('databaseAdminUrl'));
    const env = replicaEnv({
      databaseUrl,
      sandboxUrl: sandbox.url,
      apiKey,
      extra: { SYNC_ENABLED: 'false', SYNC_ON_STARTUP: 'false' },
    });
    a = await ServiceReplica.create('drain-a', group, {
      ...env,
      CHECKOUT_WORKER_INTERVAL_MS: '100',
      SHUTDOWN_DRAIN_DELAY_MS: String(DRAIN_MS),
      SHUTDOWN_TIMEOUT_MS: String(DRAIN_MS + 6_000),
    });
    // B claims nothing in the background (its worker is off) until the test restarts it with the worker on.
    b = await ServiceReplica.create('drain-b', group, { ...env, CHECKOUT_WORKER_ENABLED: 'false' });
    await a.start();
    await b.start({ CHECKOUT_CRASH_POINTS: 'after_commit_created', CHECKOUT_LEASE_MS: '500' });
    db = new Client({ connectionString: databaseUrl });
    await db.connect();
  }, 120_000);

  afterAll(async () => {
    await db?.end();
    await group.stopAll();
    if (databaseUrl) await dropDatabase(inject('databaseAdminUrl'), databaseUrl);
  });

  const auth = { authorization: `Bearer ${apiKey}` };

  /** A ticket of a fresh event listed at PRICE_MINOR, and the order body of a fresh, funded buyer for it. */
  const orderBody = () => fundedOrderBody(sandbox, nextEvent++, 'drain', PRICE_MINOR);

  const post = (url: string, key: string, body: unknown) =>
    fetch(`${url}/v1/orders`, {
      method: 'POST',
      headers: { ...auth, 'idempotency-key': key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });

  const orderRow = async (key: string): Promise<OrderRow | undefined> =>
    (
      await db.query<OrderRow>(
        `SELECT id, lease_owner, lease_token::text AS lease_token,
                COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - lease_until) * 1000, 0)::float8 AS expired_for_ms
         FROM orders WHERE idempotency_key = $1`,
        [key],
      )
    ).rows[0];

  /** The order's final state, asked of `url` (`?wait=` long polls; bounded). */
  const finalState = async (url: string, id: string): Promise<string> => {
    let last = 'unknown';
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const res = await fetch(`${url}/v1/orders/${id}?wait=5s`, {
        headers: auth,
        signal: AbortSignal.timeout(15_000),
      });
      const order = (await res.json()) as { state: string; final: boolean };
      last = order.state;
      if (order.final) return last;
    }
    return `not final: ${last}`;
  };

  it('a draining replica claims no due order, yet still takes and buys a POST /v1/orders', async () => {
    const [served, orphan] = [await orderBody(), await orderBody()];
    const draining = a.proc as Managed;
    const readyOfA = async (): Promise<string> => {
      const res = await fetch(`${a.url}/health/ready`, { signal: AbortSignal.timeout(10_000) });
      return `${res.status} ${((await res.json()) as { error?: { message?: string } }).error?.message ?? ''}`;
    };
    process.kill(draining.pid, 'SIGTERM');
    await waitUntil(async () => (await readyOfA()) === '503 Not ready: shutting down', 10_000, 20);

    // A request served during the drain works as ever: accepted, and its own drive runs.
    const accepted = await post(a.url, 'drain-served', served);
    expect(accepted.status).toBe(202);
    const servedId = ((await accepted.json()) as { id: string }).id;

    // B inserts an order and dies right after the commit: nobody drives it, and its 500 ms lease runs out.
    const crashing = b.proc as Managed;
    await post(b.url, 'drain-orphan', orphan).catch(() => null);
    await waitForExit(crashing, 10_000);
    const before = await orderRow('drain-orphan');
    expect(before?.lease_owner).toContain(`:${crashing.pid}:`);
    // Until its lease has been over for 1.5 s (database clock): A's worker (a pass every 100 ms) would have taken
    // it over by then.
    const untilExpiredMs = Math.max(0, 1_500 - (before?.expired_for_ms ?? 0));
    expect(untilExpiredMs).toBeLessThan(3_000);
    await new Promise((r) => setTimeout(r, untilExpiredMs));
    const during = await orderRow('drain-orphan');
    // Untouched: the same holder (the dead B) and the same fencing token, its lease long over.
    expect({ ...during, expired_for_ms: 0 }).toEqual({ ...before, expired_for_ms: 0 });
    expect(during?.expired_for_ms).toBeGreaterThan(1_500);
    // Still in A's drain (it answers, readiness 503): the read above ran while A could have claimed.
    expect(await readyOfA()).toBe('503 Not ready: shutting down');

    await waitForExit(draining, DRAIN_MS + 10_000);
    expect(draining.child.exitCode).toBe(0);
    expect(draining.output()).not.toContain('shutdown timed out');
    expect(draining.output()).not.toContain('lease expired, taken over');

    // After the restart, B's worker takes the orphan over; the order A took during its drain is bought too.
    await b.start({ CHECKOUT_WORKER_ENABLED: 'true' });
    const orphanId = (before as OrderRow).id;
    expect([await finalState(b.url, servedId), await finalState(b.url, orphanId)]).toEqual([
      'confirmed',
      'confirmed',
    ]);
    // Every step of the orphan was B's: the draining A never drove it.
    const actors = await db.query<{ actor: string }>(
      `SELECT DISTINCT actor FROM order_steps WHERE order_id = $1`,
      [orphanId],
    );
    expect(actors.rows.filter((r) => r.actor.includes(`:${draining.pid}:`))).toEqual([]);
    expect(actors.rows.length).toBeGreaterThan(0);
  }, 180_000);
});
