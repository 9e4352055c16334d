import type { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { OrderRepository } from '../../src/checkout/order.repository';
import { CheckoutConfig } from '../../src/config/checkout.config';
import { WebhooksConfig } from '../../src/config/webhooks.config';
import { claimFairSql, claimLockSql } from '../../src/durable-work/lease.sql';
import { WebhookDeliveryRepository } from '../../src/webhooks/webhook-delivery.repository';
import { durableWorkFor } from '../support/durable-work';
import { insertTestClient, openTestDataSource, type TestDataSource } from '../support/test-database';
import { pgPool } from '../../src/database/data-source';

const BACKLOG = 10_000;

const webhooksConfig = (endpointCap: number, clientCap: number) =>
  Object.assign(new WebhooksConfig(), {
    WEBHOOKS_ENDPOINT_MAX_IN_FLIGHT: endpointCap,
    WEBHOOKS_CLIENT_MAX_IN_FLIGHT: clientCap,
  });

/**
 * Fair claims (docs/durable-work.md "Fair claims") against real PostgreSQL: a group with a backlog of 10,000 due
 * rows does not delay another group's first row, a group and an owner never hold more than their caps, and the
 * claim reads indexes, not the backlog.
 */
describe('fair claims (durable work, real PostgreSQL)', () => {
  let db: TestDataSource;
  let dataSource: DataSource;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    db = await openTestDataSource(inject('databaseAdminUrl'), { poolSize: 4 });
    dataSource = db.dataSource;
    alice = await insertTestClient(dataSource, 'webhooks:write');
    [{ id: bob }] = await dataSource.query<{ id: string }[]>(
      `INSERT INTO api_clients (name, key_prefix, key_hash, scopes)
       VALUES ('bob', 'trb_live_bobbobbobb', decode(repeat('cd', 32), 'hex'), ARRAY['webhooks:write']) RETURNING id`,
    );
  });
  afterAll(() => db?.close());

  const endpoint = async (clientId: string): Promise<string> => {
    const [row] = await dataSource.query<{ id: string }[]>(
      `INSERT INTO webhook_endpoints (client_id, url, secret) VALUES ($1, 'https://hooks.example.com/', '\\x00')
       RETURNING id`,
      [clientId],
    );
    return row.id;
  };
  /** `n` due deliveries to `endpointId`, due `ageSeconds` ago (older first: the backlog is ahead in time). */
  const due = (endpointId: string, clientId: string, n: number, ageSeconds: number, tag: string) =>
    dataSource.query(
      `WITH ev AS (
         INSERT INTO outbox_events (id, type, version, client_id, payload)
         SELECT 'evt_' || md5($3 || g), 'webhook.ping', 1, $2::uuid, '{}'::jsonb FROM generate_series(1, $4::int) g
         RETURNING id)
       INSERT INTO webhook_deliveries (endpoint_id, event_id, next_attempt_at)
       SELECT $1::uuid, id, clock_timestamp() - make_interval(secs => $5) FROM ev`,
      [endpointId, clientId, tag, n, ageSeconds],
    );
  it("a dead endpoint's 10,000 due deliveries do not delay another client's first; caps hold", async () => {
    const dead = await endpoint(alice);
    const aliceOther = await endpoint(alice);
    const bobs = await endpoint(bob);
    await due(dead, alice, BACKLOG, 3600, 'dead');
    await due(aliceOther, alice, 5, 1800, 'other');
    await due(bobs, bob, 1, 0, 'bob');
    await dataSource.query('ANALYZE webhook_deliveries');
    const sut = new WebhookDeliveryRepository(dataSource, durableWorkFor(dataSource), webhooksConfig(4, 6));

    const first = await sut.claimDue(3, 60_000);
    const endpointOf = async (ids: string[]) =>
      (
        await dataSource.query<{ endpoint_id: string }[]>(
          `SELECT endpoint_id FROM webhook_deliveries WHERE id = ANY($1::uuid[])`,
          [ids],
        )
      ).map((r) => r.endpoint_id);

    // One round: every endpoint's first delivery before any endpoint's second, whatever their age.
    expect((await endpointOf(first.map((c) => c.id))).sort()).toEqual([dead, aliceOther, bobs].sort());

    // The caps: the dead endpoint holds at most 4, alice at most 6 over her two endpoints, across claimers.
    const other = new WebhookDeliveryRepository(dataSource, durableWorkFor(dataSource), webhooksConfig(4, 6));
    const more = [...(await other.claimDue(50, 60_000)), ...(await sut.claimDue(50, 60_000))];
    const held = await endpointOf([...first, ...more].map((c) => c.id));
    expect(held.filter((e) => e === dead).length).toBeLessThanOrEqual(4);
    expect(held.filter((e) => e === dead || e === aliceOther)).toHaveLength(6);
    expect(await sut.claimDue(50, 60_000)).toEqual([]);

    // A wake-up (a ping, a manual retry) is held to the same caps.
    const [spare] = await dataSource.query<{ id: string }[]>(
      `SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 AND lease_owner IS NULL LIMIT 1`,
      [dead],
    );
    expect(await sut.claimOne(spare.id, 60_000)).toBeNull();
    await dataSource.query(`UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL`);
    expect(await sut.claimOne(spare.id, 60_000)).not.toBeNull();
  });

  it('serialised claims: a wake-up waits for a claim in progress and then sees its leases (the cap holds exactly)', async () => {
    await dataSource.query(`UPDATE webhook_deliveries SET status = 'delivered', next_attempt_at = NULL`);
    const hooked = await endpoint(bob);
    await due(hooked, bob, 5, 60, 'serial');
    const [newest] = await dataSource.query<{ id: string }[]>(
      `SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY next_attempt_at DESC LIMIT 1`,
      [hooked],
    );
    // Another replica's pass, caught between its claim and its commit: it holds the endpoint's 4 oldest.
    const other = await pgPool(dataSource).connect();
    try {
      await other.query('BEGIN');
      await other.query(claimLockSql('webhook_deliveries'));
      const sql = claimFairSql('webhook_deliveries', { group: 'endpoint_id', cap: 4 }, `status = 'pending'`);
      const { rows } = await other.query(sql, ['other-replica', 60_000, 16]);
      expect(rows).toHaveLength(4);

      const sut = new WebhookDeliveryRepository(dataSource, durableWorkFor(dataSource), webhooksConfig(4, 8));
      let settled = false;
      const woken = sut.claimOne(newest.id, 60_000).finally(() => (settled = true));
      // Unserialised, the wake-up's snapshot would not see the 4 uncommitted leases and claim a fifth send.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(settled).toBe(false);
      await other.query('COMMIT');
      expect(await woken).toBeNull();
    } finally {
      other.release();
    }
    const [{ n }] = await dataSource.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 AND lease_owner IS NOT NULL`,
      [hooked],
    );
    expect(n).toBe(4);
  });

  it('reads indexes, not the backlog: the plan of a claim over 10,000 due rows has no sequential scan', async () => {
    const sql = claimFairSql(
      'webhook_deliveries',
      {
        group: 'endpoint_id',
        cap: 4,
        ownerOf: (g) => `(SELECT client_id FROM webhook_endpoints WHERE id = ${g})`,
        ownerCap: 8,
      },
      `status = 'pending'`,
      'attempts = t.attempts + 1',
    );
    await dataSource.query(`UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL`);
    const text = (
      await dataSource.query<{ 'QUERY PLAN': string }[]>(`EXPLAIN (COSTS OFF) ${sql}`, [
        'explain',
        60_000,
        16,
      ])
    )
      .map((r) => r['QUERY PLAN'])
      .join('\n');
    expect(text).not.toMatch(/Seq Scan on webhook_deliveries/);
    expect(text).toMatch(/webhook_deliveries_endpoint_due_idx/);
  });

  it("orders: one client's 1,000 queued orders do not delay another client's first; a client holds at most its cap", async () => {
    const queue = (clientId: string, n: number, ageSeconds: number, tag: string) =>
      dataSource.query(
        `INSERT INTO orders (client_id, idempotency_key, fingerprint, buyer_subject, buyer_address, event_id,
           ticket_id, expected_price_minor, state, recovery_point, next_attempt_at)
         SELECT $1, $2 || g, repeat('a', 64), 'buyer-' || g, 'addr', 9000000 + g, g, 1000, 'created', 'revalidate',
           clock_timestamp() - make_interval(secs => $4)
         FROM generate_series(1, $3::int) g`,
        [clientId, tag, n, ageSeconds],
      );
    await queue(alice, 1_000, 3600, 'flood-');
    await queue(bob, 1, 0, 'first-');
    await dataSource.query('ANALYZE orders');
    const config = Object.assign(new CheckoutConfig(), { CHECKOUT_CLIENT_MAX_IN_FLIGHT: 5 });
    const sut = new OrderRepository(dataSource, durableWorkFor(dataSource), config, pgPool(dataSource));

    const first = await sut.claimDue(60_000, 2);
    expect(first.map((o) => o.clientId).sort()).toEqual([alice, bob].sort());

    const rest = await sut.claimDue(60_000, 100);
    expect(rest.filter((o) => o.clientId === alice)).toHaveLength(4);
    expect(await sut.claimDue(60_000, 100)).toEqual([]);
  });
});
