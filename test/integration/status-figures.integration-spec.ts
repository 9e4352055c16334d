import type { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MINUTE_MS, minuteOf } from '../../src/status/status.aggregation';
import { OrderFiguresRepository } from '../../src/checkout/order-figures.repository';
import { WebhookBacklogRepository } from '../../src/webhooks/webhook-backlog.repository';
import { insertTestClient, openTestDataSource, type TestDataSource } from '../support/test-database';

/**
 * The status page's figures of other modules' tables, read by their owners (StatusFigures asks CheckoutService
 * and WebhooksService): the delivery backlog of webhooks/, the finals of a minute of checkout/.
 */
describe('status figures of their owners (WebhookBacklogRepository, OrderFiguresRepository)', () => {
  let db: TestDataSource;
  let dataSource: DataSource;
  let backlogs: WebhookBacklogRepository;
  let orders: OrderFiguresRepository;
  let clientId: string;
  let buyerClientId: string;

  beforeAll(async () => {
    db = await openTestDataSource(inject('databaseAdminUrl'), { poolSize: 2 });
    dataSource = db.dataSource;
    backlogs = new WebhookBacklogRepository(dataSource);
    orders = new OrderFiguresRepository(dataSource);
    clientId = await insertTestClient(dataSource, 'admin');
    // Orders of another client: their events reach none of the endpoints the backlog test makes.
    const [buyer] = await dataSource.query<{ id: string }[]>(
      `INSERT INTO api_clients (name, key_prefix, key_hash, scopes)
       VALUES ('buyer', 'trb_live_statusfig1', decode(repeat('cd', 32), 'hex'), ARRAY['orders:write']) RETURNING id`,
    );
    buyerClientId = buyer?.id ?? '';
  });
  afterAll(() => db?.close());

  it('totals the webhook backlog of every endpoint, not only of the 100 it lists', async () => {
    await dataSource.query(
      `INSERT INTO webhook_endpoints (client_id, url, secret)
       SELECT $1, 'https://hooks.example.com/' || g, '\\x00'::bytea FROM generate_series(1, 120) g`,
      [clientId],
    );
    await dataSource.query(
      `INSERT INTO outbox_events (id, type, version, payload)
       SELECT 'evt_' || lpad(to_hex(g), 32, '0'), 'sync.pass_completed', 1, '{}' FROM generate_series(1, 3) g`,
    );
    // Each endpoint: one pending delivery, one given up today, one given up two days ago (not counted).
    await dataSource.query(
      `INSERT INTO webhook_deliveries (endpoint_id, event_id, status, updated_at)
       SELECT e.id, 'evt_' || lpad(to_hex(v.n), 32, '0'), v.status, now() - v.age
       FROM webhook_endpoints e,
         (VALUES (1, 'pending', interval '0'), (2, 'failed', interval '1 hour'), (3, 'failed', interval '2 days'))
           AS v(n, status, age)`,
    );
    const backlog = await backlogs.backlog();
    expect(backlog.endpoints).toHaveLength(100);
    expect(backlog.undelivered).toBe(120);
    expect(backlog.failed).toBe(120);
    expect(backlog.endpoints.every((e) => e.undelivered === 1 && e.failed === 1)).toBe(true);
  });

  it('reads the deliveries given up in the last 24 h through an index of failed deliveries (no scan of the table)', async () => {
    const plan = await dataSource.transaction(async (manager) => {
      await manager.query(`SET LOCAL enable_seqscan = off`);
      const rows = await manager.query<{ 'QUERY PLAN': string }[]>(
        `EXPLAIN SELECT endpoint_id, count(*) FROM webhook_deliveries
         WHERE status = 'failed' AND updated_at > now() - interval '24 hours' GROUP BY endpoint_id`,
      );
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    });
    expect(plan).toContain('webhook_deliveries_failed_idx');
  });

  it('counts every final of a minute by outcome and attempt; times to final are a sample in final_at order', async () => {
    const [row] = await dataSource.query<{ now: number }[]>(
      `SELECT (extract(epoch FROM now()) * 1000)::float8 AS now`,
    );
    const minute = minuteOf(row?.now ?? 0) - 3 * MINUTE_MS;
    const insert = (n: number, state: string, attempt: number, offsetMs: number, durationMs: number) =>
      dataSource.query(
        `INSERT INTO orders (client_id, idempotency_key, fingerprint, buyer_subject, buyer_address, event_id,
           ticket_id, expected_price_minor, state, recovery_point, attempt, final_at, created_at)
         SELECT $1, $2 || '-' || g, repeat('a', 64), 'buyer', 'addr', 9000000 + g, g, 1000, $3, 'done', $4,
           to_timestamp(($5::float8 + $6::float8) / 1000.0), to_timestamp(($5::float8 + $6::float8 - $7::float8) / 1000.0)
         FROM generate_series(1, $8::int) g`,
        [buyerClientId, `${state}-${attempt}-${offsetMs}`, state, attempt, minute, offsetMs, durationMs, n],
      );
    await insert(3, 'confirmed', 1, 1_000, 500);
    await insert(2, 'confirmed', 2, 2_000, 700);
    await insert(1, 'rejected', 1, 30_000, 100);
    await insert(1, 'confirmed', 1, 60_000, 50); // the next minute
    await insert(1, 'confirmed', 1, -1, 50); // the minute before

    expect(await orders.finalCounts(minute, minute + MINUTE_MS)).toEqual([
      { state: 'confirmed', attempt: 1, count: 3 },
      { state: 'confirmed', attempt: 2, count: 2 },
      { state: 'rejected', attempt: 1, count: 1 },
    ]);
    const durations = await orders.finalDurations(minute, minute + MINUTE_MS);
    expect(durations.map(Math.round)).toEqual([500, 500, 500, 700, 700, 100]);
  });
});
