import type { QueryRunner } from 'typeorm';
import { DataSource } from 'typeorm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inBackground } from '../../src/database/pool-gate';
import { issueTestKey, type TestClient } from '../support/auth-helpers';
import {
  ownerOf,
  CHECKOUT_TEST_ENV,
  getOrder,
  market,
  orderBody,
  postOrder,
  waitFinal,
} from '../support/checkout-helpers';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitUntil } from '../support/wait';

const POOL = 4;

/**
 * The database pool under pressure: an exhausted pool answers 503 DATABASE_BUSY with Retry-After (never 500),
 * and background work (order drives, workers) can never take the connections reserved for request handling.
 */
describe('Checkout with the database pool under pressure (e2e)', () => {
  let t: TestApp;
  let client: TestClient;
  let held: QueryRunner[] = [];

  beforeAll(async () => {
    t = await startTestApp(
      { ...CHECKOUT_TEST_ENV, DB_POOL_SIZE: String(POOL) },
      { sandbox: { landingDelayMs: 50 } },
    );
    client = await issueTestKey(t.app, ['orders:write']);
  });
  afterEach(async () => {
    await Promise.all(held.map((r) => r.release()));
    held = [];
  });
  afterAll(async () => {
    await t?.close();
  });

  /** Checks out `n` pooled connections and keeps them (idle) until the test ends. */
  async function hold(n: number): Promise<void> {
    const ds = t.app.get(DataSource);
    for (let i = 0; i < n; i++) {
      const runner = ds.createQueryRunner();
      await runner.connect();
      held.push(runner);
    }
  }

  it('every connection taken: POST and GET answer 503 DATABASE_BUSY with Retry-After, and nothing went upstream', async () => {
    const { listing, buyer } = market(t.sandbox, 'busy-1');
    const before = await postOrder(t.app, client.key, 'busy-before', orderBody(listing, buyer));
    expect(before.status).toBe(202);
    await waitFinal(t.app, client.key, before.body.id);
    const signedBefore = t.sandbox.admin.stats().transactions;

    await hold(POOL);
    const other = market(t.sandbox, 'busy-2');
    const [post, get] = await Promise.all([
      postOrder(t.app, client.key, 'busy-during', orderBody(other.listing, other.buyer)),
      getOrder(t.app, client.key, `/v1/orders/${before.body.id}`),
    ]);
    for (const answer of [post, get]) {
      expect(answer.status).toBe(503);
      expect((answer.body as unknown as { error: { code: string } }).error.code).toBe('DATABASE_BUSY');
    }
    expect(post.headers['retry-after']).toBe('1');
    expect(t.sandbox.admin.stats().transactions).toBe(signedBefore);

    // Retried once the pool has room: the same key makes the order (the 503 stored nothing).
    await Promise.all(held.map((r) => r.release()));
    held = [];
    const retried = await postOrder(t.app, client.key, 'busy-during', orderBody(other.listing, other.buyer));
    expect(retried.status).toBe(202);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect((await waitFinal(t.app, client.key, retried.body.id)).state).toBe('confirmed');
  }, 60_000);

  it('background work asking for every connection gets only its share: requests still get the reserved one; the order is bought once the share frees', async () => {
    // Background work asks for all POOL connections and keeps what it gets: only POOL minus a quarter.
    const ds = t.app.get(DataSource);
    const share = POOL - Math.floor(POOL / 4);
    const grabs = Array.from({ length: POOL }, () =>
      inBackground(async () => {
        const runner = ds.createQueryRunner();
        await runner.connect();
        held.push(runner);
      }).catch(() => undefined),
    );
    await waitUntil(() => held.length >= share, 5000, 10);
    const { listing, buyer } = market(t.sandbox, 'busy-3');
    const signedBefore = t.sandbox.admin.stats().transactions;

    const created = await postOrder(t.app, client.key, 'busy-reserved', orderBody(listing, buyer));
    expect(created.status).toBe(202);
    const read = await getOrder(t.app, client.key, `/v1/orders/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(held.length).toBe(share);
    // Its drive is background work too: the ledger's row waits for the share, so nothing is submitted yet (the
    // signing call leaves alongside that row's insert, so at most one transaction may be signed), then proceeds.
    expect(t.sandbox.admin.stats().transactions - signedBefore).toBeLessThanOrEqual(1);
    expect(t.sandbox.admin.transactions({ state: 'processing' })).toEqual([]);
    expect(ownerOf(t.sandbox, listing.eventId, listing.ticketId)).not.toBe(buyer.address);

    await Promise.all(held.splice(0).map((r) => r.release()));
    await Promise.all(grabs);
    await Promise.all(held.splice(0).map((r) => r.release()));
    const final = await waitFinal(t.app, client.key, created.body.id, 30_000);
    expect(final.state).toBe('confirmed');
    expect(t.sandbox.admin.stats().transactions - signedBefore).toBe(1);
  }, 60_000);
});
