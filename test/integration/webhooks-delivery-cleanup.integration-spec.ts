import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { pgPool } from '../../src/database/data-source';
import { OutboxRepository } from '../../src/webhooks/outbox.repository';
import { SecretBox } from '../../src/webhooks/secret-box';
import { WebhookEndpointRepository } from '../../src/webhooks/webhook-endpoint.repository';
import { appendEvents, orderCreatedEvent } from '../support/outbox-events';
import { openTestDataSource, type TestDataSource } from '../support/test-database';
import { waitUntil } from '../support/wait';

/**
 * Deliveries never outlive their event or their endpoint (migrations/…-DeliveriesWithoutEventForeignKey.ts): the
 * event foreign key is gone, and the statement trigger on `outbox_events` deletes a deleted event's deliveries; the
 * endpoint foreign key stays, with its cascade.
 */
const created = orderCreatedEvent;

describe('webhook deliveries without an event or endpoint', () => {
  let db: TestDataSource;
  let dataSource: DataSource;
  let pool: Pool;
  let outbox: OutboxRepository;
  let endpoints: WebhookEndpointRepository;
  let clientA: string;
  const box = SecretBox.from(undefined, 'a-pepper-of-at-least-thirty-two-characters');

  const endpoint = async (clientId: string): Promise<string> => {
    const row = await endpoints.create(
      {
        clientId,
        url: 'https://hooks.example.com/',
        description: null,
        eventTypes: [],
        operatorEvents: false,
        enabled: true,
        secret: box.seal('whsec_AAAA'),
      },
      100,
    );
    if (!row) throw new Error('endpoint not created');
    return row.id;
  };
  const append = (orders: string[]): Promise<string[]> =>
    dataSource.transaction((m) =>
      appendEvents(
        m,
        orders.map((o) => created(clientA, o)),
      ),
    );
  const deliveryEvents = async (): Promise<string[]> =>
    (
      await dataSource.query<{ event_id: string }[]>(
        `SELECT DISTINCT event_id FROM webhook_deliveries ORDER BY event_id`,
      )
    ).map((r) => r.event_id);
  /** Deliveries whose event or endpoint does not exist: always none. */
  const orphans = async (): Promise<number> => {
    const [row] = await dataSource.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM webhook_deliveries d
       WHERE NOT EXISTS (SELECT 1 FROM outbox_events e WHERE e.id = d.event_id)
          OR NOT EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.id = d.endpoint_id)`,
    );
    return row?.n ?? -1;
  };

  beforeAll(async () => {
    db = await openTestDataSource(inject('databaseAdminUrl'), { poolSize: 4 });
    dataSource = db.dataSource;
    pool = pgPool(dataSource);
    outbox = new OutboxRepository(dataSource);
    endpoints = new WebhookEndpointRepository(dataSource);
    const [row] = await dataSource.query<{ id: string }[]>(
      `INSERT INTO api_clients (name, key_prefix, key_hash, scopes)
       VALUES ('t', 'trb_live_cleanup0001', sha256('cleanup'), ARRAY['webhooks:write']) RETURNING id`,
    );
    clientA = row?.id ?? '';
  });
  afterAll(() => db?.close());
  beforeEach(async () => {
    await dataSource.query(`DELETE FROM webhook_endpoints`);
    await dataSource.query(`DELETE FROM outbox_events`);
  });

  it('pruning deletes the deliveries of the events it deletes, and only those', async () => {
    await endpoint(clientA);
    await endpoint(clientA);
    const old = await append(['o1', 'o2', 'o3']);
    const recent = await append(['r1']);
    await dataSource.query(
      `UPDATE outbox_events SET occurred_at = clock_timestamp() - interval '40 days' WHERE id = ANY($1)`,
      [old],
    );
    expect(await deliveryEvents()).toEqual([...old, ...recent].sort());

    // Pruning takes only events below every running transaction of the cluster (another file's test may hold one).
    let pruned = 0;
    await waitUntil(async () => (pruned += await outbox.pruneBatch(30)) >= 3, 10_000);
    expect(pruned).toBe(3);

    expect(await deliveryEvents()).toEqual(recent);
    const [{ n }] = await dataSource.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM webhook_deliveries`,
    );
    expect(n).toBe(2);
    expect(await orphans()).toBe(0);
  });

  it('a rolled-back delete keeps events and deliveries; any DELETE or TRUNCATE of events takes theirs', async () => {
    await endpoint(clientA);
    const ids = await append(['a', 'b', 'c']);
    await dataSource
      .transaction(async (m) => {
        await m.query(`DELETE FROM outbox_events WHERE id = ANY($1)`, [ids]);
        throw new Error('roll back');
      })
      .catch(() => undefined);
    expect(await deliveryEvents()).toEqual([...ids].sort());

    await dataSource.query(`DELETE FROM outbox_events WHERE id = ANY($1)`, [ids.slice(0, 2)]);
    expect(await deliveryEvents()).toEqual([ids[2]]);
    expect(await orphans()).toBe(0);

    await dataSource.query(`TRUNCATE outbox_events`);
    expect(await deliveryEvents()).toEqual([]);
  });

  it("deleting an endpoint deletes its deliveries and no other endpoint's", async () => {
    const gone = await endpoint(clientA);
    const kept = await endpoint(clientA);
    const ids = await append(['x', 'y']);

    expect(await endpoints.delete(clientA, gone)).toBe(true);

    const rows = await dataSource.query<{ endpoint_id: string }[]>(
      `SELECT DISTINCT endpoint_id::text FROM webhook_deliveries WHERE event_id = ANY($1)`,
      [ids],
    );
    expect(rows).toEqual([{ endpoint_id: kept }]);
    expect(await orphans()).toBe(0);
  });

  it('an endpoint deleted while a fan-out to it is uncommitted waits for it, then takes its delivery', async () => {
    const target = await endpoint(clientA);
    const writer = await pool.connect();
    try {
      await writer.query('BEGIN');
      const [id] = await appendEvents(writer, [created(clientA, 'race')]);
      let deleted: boolean | null = null;
      const deleting = endpoints.delete(clientA, target).then((ok) => (deleted = ok));
      // The delete waits on the fan-out's key-share lock of the endpoint row (the foreign key's check).
      await waitUntil(async () => {
        const [row] = await dataSource.query<{ n: number }[]>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'
             AND query LIKE 'DELETE FROM webhook_endpoints%'`,
        );
        return (row?.n ?? 0) > 0;
      }, 10_000);
      expect(deleted).toBeNull();
      await writer.query('COMMIT');
      await deleting;
      expect(deleted).toBe(true);
      expect(await deliveryEvents()).toEqual([]);
      expect(await dataSource.query(`SELECT 1 FROM outbox_events WHERE id = $1`, [id])).toHaveLength(1);
      expect(await orphans()).toBe(0);
    } finally {
      writer.release();
    }
  });
});
