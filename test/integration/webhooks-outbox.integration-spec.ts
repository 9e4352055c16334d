import type { Pool, PoolClient } from 'pg';
import type { DataSource } from 'typeorm';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it, vi } from 'vitest';
import { pgPool } from '../../src/database/data-source';
import { WebhooksConfig } from '../../src/config/webhooks.config';
import { OutboxRepository } from '../../src/webhooks/outbox.repository';
import { appendEvents, orderCreatedEvent } from '../support/outbox-events';
import { SecretBox } from '../../src/webhooks/secret-box';
import { WebhookDeliveryRepository } from '../../src/webhooks/webhook-delivery.repository';
import { WebhookEndpointRepository } from '../../src/webhooks/webhook-endpoint.repository';
import type { NewEvent } from '../../src/webhooks/webhook-events';
import { durableWorkFor } from '../support/durable-work';
import { openTestDataSource, type TestDataSource } from '../support/test-database';
import { waitUntil } from '../support/wait';

const START = { xactId: '0', position: '0' };

const created = orderCreatedEvent;
const confirmed = (clientId: string, order = 'o-1'): NewEvent => ({
  type: 'order.confirmed',
  clientId,
  data: {
    order_id: order,
    state: 'confirmed',
    attempt: 1,
    event_id: '1',
    ticket_id: '2',
    price_minor: '18446744073709551615',
    failure: null,
    transaction_signature: 'sig',
  },
});

let clients = 0;
/** An API client row with `scope` (each with its own key prefix). */
async function insertClient(dataSource: DataSource, scope: string): Promise<string> {
  const [row] = await dataSource.query<{ id: string }[]>(
    `INSERT INTO api_clients (name, key_prefix, key_hash, scopes)
     VALUES ('t', $1::text, sha256(convert_to($1::text, 'UTF8')), ARRAY[$2]) RETURNING id`,
    [`trb_live_hooks${String(++clients).padStart(6, '0')}`, scope],
  );
  if (!row) throw new Error('client not inserted');
  return row.id;
}

describe(OutboxRepository.name, () => {
  let db: TestDataSource;
  let dataSource: DataSource;
  let pool: Pool;
  let sut: OutboxRepository;
  let endpoints: WebhookEndpointRepository;
  let clientA: string;
  let clientB: string;
  let admin: string;
  const box = SecretBox.from(undefined, 'a-pepper-of-at-least-thirty-two-characters');

  const syncDone: NewEvent = {
    type: 'sync.pass_completed',
    clientId: null,
    data: { pass_id: 'p-1', resource: 'listings', scope: 'all', items: 10, upserted: 2, removed: 1 },
  };
  const endpoint = async (clientId: string, eventTypes: string[] = [], enabled = true, operator = false) => {
    const row = await endpoints.create(
      {
        clientId,
        url: 'https://hooks.example.com/',
        description: null,
        eventTypes,
        operatorEvents: operator,
        enabled,
        secret: box.seal('whsec_AAAA'),
      },
      100,
    );
    if (!row) throw new Error('endpoint not created');
    return row.id;
  };
  const deliveriesOf = (eventIds: string[]) =>
    dataSource.query<{ event_id: string; endpoint_id: string; status: string }[]>(
      `SELECT event_id, endpoint_id::text, status FROM webhook_deliveries WHERE event_id = ANY($1) ORDER BY event_id, endpoint_id`,
      [eventIds],
    );
  /** A pg client in its own open transaction. */
  const begin = async (): Promise<PoolClient> => {
    const client = await pool.connect();
    await client.query('BEGIN');
    return client;
  };

  beforeAll(async () => {
    db = await openTestDataSource(inject('databaseAdminUrl'), { poolSize: 6 });
    dataSource = db.dataSource;
    pool = pgPool(dataSource);
    sut = new OutboxRepository(dataSource);
    endpoints = new WebhookEndpointRepository(dataSource);
    clientA = await insertClient(dataSource, 'orders:write');
    clientB = await insertClient(dataSource, 'orders:write');
    admin = await insertClient(dataSource, 'admin');
  });
  afterAll(() => db?.close());
  beforeEach(async () => {
    await dataSource.query(`DELETE FROM webhook_endpoints`);
    await dataSource.query(`DELETE FROM outbox_events`);
  });

  /** Records a pass of `resource` that ran and completed; answers the event types it announced. */
  const finish = async (resource: string, trigger: string): Promise<string[]> => {
    const [{ id }] = await dataSource.query(
      `INSERT INTO sync_passes (resource, scope_event_id, status, trigger, holder, fencing_token, started_at)
       VALUES ($1, $2, 'running', $3, 'test', 1, clock_timestamp()) RETURNING id::text AS id`,
      [resource, resource === 'event_listings' ? '8' : null, trigger],
    );
    await dataSource.query(
      `UPDATE sync_passes SET status = 'completed', finished_at = clock_timestamp() WHERE id = $1`,
      [id],
    );
    const rows: { type: string }[] = await dataSource.query(
      `SELECT type FROM outbox_events WHERE payload->'data'->>'pass_id' = $1 OR payload->>'pass_id' = $1`,
      [id],
    );
    return rows.map((r) => r.type);
  };

  it('announces a finished full pass or event refresh, never a hot-set or fresh=true walk (no flood of sync.* events)', async () => {
    expect(await finish('listings', 'schedule')).toEqual(['sync.pass_completed']);
    expect(await finish('event_listings', 'refresh')).toEqual(['sync.pass_completed']);
    expect(await finish('event_listings', 'hot')).toEqual([]);
    expect(await finish('event_listings', 'fresh')).toEqual([]);
  });

  it('appends in the caller’s transaction: a rollback leaves neither the events nor their deliveries', async () => {
    await endpoint(clientA);
    let ids: string[] = [];

    await expect(
      dataSource.transaction(async (manager) => {
        ids = await appendEvents(manager, [created(clientA), confirmed(clientA)]);
        throw new Error('the state change failed');
      }),
    ).rejects.toThrow('the state change failed');

    expect(ids).toHaveLength(2);
    expect(await dataSource.query(`SELECT id FROM outbox_events WHERE id = ANY($1)`, [ids])).toEqual([]);
    expect(await deliveriesOf(ids)).toEqual([]);
  });

  it('fans out in the same statement: one pending delivery per matching enabled endpoint of the owner', async () => {
    const all = await endpoint(clientA);
    const confirmations = await endpoint(clientA, ['order.confirmed']);
    await endpoint(clientA, [], false);
    await endpoint(clientB);
    const operator = await endpoint(admin, [], true, true);

    const ids = await dataSource.transaction((manager) =>
      appendEvents(manager, [created(clientA), confirmed(clientA), syncDone]),
    );

    const [createdId, confirmedId, syncId] = ids as [string, string, string];
    expect(await deliveriesOf(ids)).toEqual(
      [
        { event_id: createdId, endpoint_id: all, status: 'pending' },
        { event_id: confirmedId, endpoint_id: all, status: 'pending' },
        { event_id: confirmedId, endpoint_id: confirmations, status: 'pending' },
        { event_id: syncId, endpoint_id: operator, status: 'pending' },
      ].sort((a, b) => (a.event_id + a.endpoint_id < b.event_id + b.endpoint_id ? -1 : 1)),
    );
    const [row] = await dataSource.query<{ payload: Record<string, unknown>; xact_id: string }[]>(
      `SELECT payload, xact_id::text FROM outbox_events WHERE id = $1`,
      [confirmedId],
    );
    expect(row?.payload.price_minor).toBe('18446744073709551615');
  });

  it('appends through a pg client between BEGIN and COMMIT too, and writes bigint as decimal strings', async () => {
    const client = await begin();
    const event = created(clientA);
    (event.data as unknown as Record<string, unknown>).expected_price_minor = 18446744073709551615n;
    try {
      const [id] = await appendEvents(client, [event]);
      await client.query('COMMIT');
      const [row] = await dataSource.query<{ payload: { expected_price_minor: unknown } }[]>(
        `SELECT payload FROM outbox_events WHERE id = $1`,
        [id],
      );
      expect(row?.payload.expected_price_minor).toBe('18446744073709551615');
    } finally {
      client.release();
    }
  });

  it('an event id is `evt_` and exactly 32 lower-case hex digits (the check, migrations/…-OutboxEventIdCheckWithoutRepeat.ts)', async () => {
    const insert = (id: string) =>
      dataSource.query(
        `INSERT INTO outbox_events (id, type, version, client_id, payload) VALUES ($1, 'order.created', 1, NULL, '{}')`,
        [id],
      );
    const hex = '0123456789abcdef0123456789abcdef';
    for (const bad of [
      `evt_${hex.slice(1)}`,
      `evt_${hex}0`,
      `evt_${hex.slice(1)}g`,
      `evt_${hex.toUpperCase()}`,
      `evx_${hex}`,
      `evt_${hex.slice(1)}\n`,
      `xevt_${hex.slice(2)}`,
    ])
      await expect(insert(bad)).rejects.toThrow(/outbox_events_id_check/);
    await insert(`evt_${hex}`);
    await dataSource.query(`DELETE FROM outbox_events WHERE id = $1`, [`evt_${hex}`]);
  });

  it('the ids the database gives events and deliveries grow (UUIDv7: each insert lands on the index’s rightmost leaf)', async () => {
    const ids = (
      await dataSource.query<{ id: string }[]>(
        `SELECT outbox_event_id() AS id FROM generate_series(1, 500) ORDER BY generate_series`,
      )
    ).map((r) => r.id);
    for (const id of ids) expect(id).toMatch(/^evt_[0-9a-f]{12}7[0-9a-f]{19}$/);
    expect(new Set(ids).size).toBe(500);
    expect([...ids].sort()).toEqual(ids);

    await endpoint(clientA);
    const events = await dataSource.transaction((manager) =>
      appendEvents(manager, [created(clientA), confirmed(clientA), created(clientA, 'o-2')]),
    );
    const deliveries = await dataSource.query<{ id: string }[]>(
      `SELECT d.id FROM webhook_deliveries d JOIN unnest($1::text[]) WITH ORDINALITY AS e(id, n) ON e.id = d.event_id
       ORDER BY e.n`,
      [events],
    );
    expect(deliveries).toHaveLength(3);
    for (const { id } of deliveries) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    const delivered = deliveries.map((d) => d.id);
    expect([...delivered].sort()).toEqual(delivered);
  });

  describe('feed', () => {
    it('is gap-free: an event committed first but written by a younger transaction waits for the older one', async () => {
      const older = await begin();
      const younger = await begin();
      try {
        const [first] = await appendEvents(older, [created(clientA, 'first')]);
        const [second] = await appendEvents(younger, [created(clientA, 'second')]);
        await younger.query('COMMIT');

        // The younger transaction committed, but the older one might still commit below it: nothing is served.
        expect(await sut.feed(clientA, false, START, 10)).toEqual([]);

        await older.query('COMMIT');
        await waitUntil(async () => (await sut.feed(clientA, false, START, 10)).length === 2, 10_000, 50);
        const rows = await sut.feed(clientA, false, START, 10);
        expect(rows.map((r) => r.id)).toEqual([first, second]);
        // Resuming after the first returns exactly the second.
        const after = { xactId: rows[0]?.xact_id ?? '', position: rows[0]?.position ?? '' };
        expect((await sut.feed(clientA, false, after, 10)).map((r) => r.id)).toEqual([second]);
      } finally {
        for (const client of [older, younger]) {
          await client.query('ROLLBACK');
          client.release();
        }
      }
    });

    it('a rolled-back transaction holds nothing back and leaves nothing behind', async () => {
      const aborted = await begin();
      try {
        await appendEvents(aborted, [created(clientA, 'aborted')]);
        const [kept] = await dataSource.transaction((m) => appendEvents(m, [created(clientA, 'kept')]));
        await aborted.query('ROLLBACK');

        await waitUntil(async () => (await sut.feed(clientA, false, START, 10)).length === 1, 10_000, 50);
        expect((await sut.feed(clientA, false, START, 10)).map((r) => r.id)).toEqual([kept]);
      } finally {
        await aborted.query('ROLLBACK');
        aborted.release();
      }
    });

    it('orders by number, not text: position 999 before 1000, and a page after 999 finds 1000', async () => {
      // The next two positions are 999 and 1000: their text order is the reverse of their numbers.
      await dataSource.query(`SELECT setval(pg_get_serial_sequence('outbox_events', 'position'), 998)`);
      const ids = await dataSource.transaction((m) => appendEvents(m, [created(clientA), created(clientA)]));
      await waitUntil(async () => (await sut.feed(clientA, false, START, 10)).length === 2, 10_000, 50);

      const all = await sut.feed(clientA, false, START, 10);
      expect(all.map((r) => [r.id, r.position])).toEqual([
        [ids[0], '999'],
        [ids[1], '1000'],
      ]);
      const [first] = await sut.feed(clientA, false, START, 1);
      const next = await sut.feed(clientA, false, { xactId: first.xact_id, position: first.position }, 1);
      expect(next.map((r) => r.id)).toEqual([ids[1]]);
    });

    it('serves a client its own events only; operator events to an operator read', async () => {
      const ids = await dataSource.transaction((m) =>
        appendEvents(m, [created(clientA), created(clientB), syncDone]),
      );
      await waitUntil(async () => (await sut.feed(admin, true, START, 10)).length === 1, 10_000, 50);

      expect((await sut.feed(clientA, false, START, 10)).map((r) => r.id)).toEqual([ids[0]]);
      expect((await sut.feed(clientB, false, START, 10)).map((r) => r.id)).toEqual([ids[1]]);
      expect((await sut.feed(admin, true, START, 10)).map((r) => r.id)).toEqual([ids[2]]);
      expect((await sut.feed(admin, false, START, 10)).map((r) => r.id)).toEqual([]);
    });
  });

  describe('pruning', () => {
    it('deletes a prefix older than the retention with its deliveries, and moves the horizon to its end', async () => {
      await endpoint(clientA);
      const old = await dataSource.transaction((m) =>
        appendEvents(m, [created(clientA, 'o1'), created(clientA, 'o2')]),
      );
      const recent = await dataSource.transaction((m) => appendEvents(m, [created(clientA, 'r1')]));
      await dataSource.query(
        `UPDATE outbox_events SET occurred_at = clock_timestamp() - interval '40 days' WHERE id = ANY($1)`,
        [old],
      );
      const [last] = await dataSource.query<{ xact_id: string; position: string }[]>(
        `SELECT xact_id::text, position::text FROM outbox_events WHERE id = $1`,
        [old[1]],
      );

      // Pruning takes only events below every running transaction of the cluster (another file's test may hold one).
      let pruned = 0;
      await waitUntil(async () => (pruned += await sut.pruneBatch(30)) >= 2, 10_000);
      expect(pruned).toBe(2);

      expect(await sut.horizon()).toEqual({ xactId: last?.xact_id, position: last?.position });
      expect(
        (await dataSource.query<{ id: string }[]>(`SELECT id FROM outbox_events`)).map((r) => r.id),
      ).toEqual(recent);
      expect(await deliveriesOf(old)).toEqual([]);
      expect(await sut.pruneBatch(30)).toBe(0);
    });
  });
});

/** No fair-share cap in the way of tests about other things (fair-claims.integration-spec.ts tests the caps). */
const uncapped = Object.assign(new WebhooksConfig(), {
  WEBHOOKS_ENDPOINT_MAX_IN_FLIGHT: 256,
  WEBHOOKS_CLIENT_MAX_IN_FLIGHT: 1024,
});

describe(WebhookDeliveryRepository.name, () => {
  let db: TestDataSource;
  let dataSource: DataSource;
  let clientId: string;
  const box = SecretBox.from(undefined, 'a-pepper-of-at-least-thirty-two-characters');

  beforeAll(async () => {
    db = await openTestDataSource(inject('databaseAdminUrl'), { poolSize: 6 });
    dataSource = db.dataSource;
    clientId = await insertClient(dataSource, 'orders:write');
    await new WebhookEndpointRepository(dataSource).create(
      {
        clientId,
        url: 'https://hooks.example.com/',
        description: null,
        eventTypes: [],
        operatorEvents: false,
        enabled: true,
        secret: box.seal('whsec_AAAA'),
      },
      10,
    );
  });
  afterAll(() => db?.close());

  const appendMany = (n: number) =>
    dataSource.transaction((m) =>
      appendEvents(
        m,
        Array.from({ length: n }, (_, i) => ({
          type: 'webhook.ping' as const,
          clientId,
          data: { endpoint_id: `e-${i}` },
        })),
      ),
    );

  it('two replicas claiming at once take each delivery once, under distinct tokens', async () => {
    await appendMany(40);
    const a = new WebhookDeliveryRepository(dataSource, durableWorkFor(dataSource), uncapped);
    const b = new WebhookDeliveryRepository(dataSource, durableWorkFor(dataSource), uncapped);

    const claims = (await Promise.all([a, b, a, b].map((sut) => sut.claimDue(15, 60_000)))).flat();

    expect(claims).toHaveLength(40);
    expect(new Set(claims.map((c) => c.id)).size).toBe(40);
    expect(new Set(claims.map((c) => c.token)).size).toBe(40);
    await dataSource.query(`UPDATE webhook_deliveries SET status = 'delivered', next_attempt_at = NULL`);
  });

  it('a claim reads what the send needs in its own statement: event, endpoint and sealed secret, the try counted', async () => {
    const [eventId] = await dataSource.transaction((m) =>
      appendEvents(m, [{ type: 'webhook.ping', clientId, data: { endpoint_id: 'e-claim' } }]),
    );
    const sut = new WebhookDeliveryRepository(dataSource, durableWorkFor(dataSource), uncapped);
    const queries = vi.spyOn(dataSource, 'query');
    // Serialised claims send the claim lock and the claim in one simple query on the pool.
    const poolQueries = vi.spyOn(pgPool(dataSource), 'query');

    const [claim, ...more] = await sut.claimDue(5, 60_000);

    expect(queries.mock.calls.length + poolQueries.mock.calls.length).toBe(1);
    queries.mockRestore();
    poolQueries.mockRestore();
    expect(more).toEqual([]);
    expect(claim).toMatchObject({
      attempts: 1,
      heldSlot: null,
      slotLater: false,
      endpoint: {
        url: 'https://hooks.example.com/',
        enabled: true,
        rateLimited: false,
        previousSecret: null,
      },
      event: { id: eventId, type: 'webhook.ping', version: 1, payload: { endpoint_id: 'e-claim' } },
    });
    expect(box.open(claim.endpoint?.secret ?? Buffer.alloc(0))).toBe('whsec_AAAA');
    const [row] = await dataSource.query<{ token: string }[]>(
      `SELECT lease_token::text AS token FROM webhook_deliveries WHERE id = $1`,
      [claim.id],
    );
    expect(claim.token).toBe(row.token);
    expect(await sut.delivered(claim, { statusCode: 204, error: null, durationMs: 1 })).toBe(true);
  });

  it("a sender whose lease ran out is fenced off: the new holder's record stands, the stale one changes nothing", async () => {
    await appendMany(1);
    const a = new WebhookDeliveryRepository(dataSource, durableWorkFor(dataSource), uncapped);
    const b = new WebhookDeliveryRepository(dataSource, durableWorkFor(dataSource), uncapped);
    // A long lease, ended explicitly below: B's first claim must find it held however slowly the test runs.
    const [stale] = await a.claimDue(1, 60_000);
    if (!stale) throw new Error('nothing claimed');
    expect(await b.claimDue(1, 60_000)).toEqual([]);

    // A's lease runs out (on the database clock, which is what claims compare against); A does not know.
    await dataSource.query(
      `UPDATE webhook_deliveries SET lease_until = clock_timestamp() - interval '1 ms' WHERE id = $1`,
      [stale.id],
    );
    const [current] = await b.claimDue(1, 60_000);

    expect(current?.id).toBe(stale.id);
    expect(BigInt(current?.token ?? 0)).toBeGreaterThan(BigInt(stale.token));
    expect(await a.delivered(stale, { statusCode: 200, error: null, durationMs: 1 })).toBe(false);
    expect(
      (await a.failed(stale, { statusCode: 500, error: 'x', durationMs: 1 }, { kind: 'failed' }, 120))
        .recorded,
    ).toBe(false);
    expect(await b.delivered(current ?? stale, { statusCode: 200, error: null, durationMs: 5 })).toBe(true);
    const [row] = await dataSource.query<{ status: string; attempts: number }[]>(
      `SELECT status, attempts FROM webhook_deliveries WHERE id = $1`,
      [stale.id],
    );
    expect(row).toEqual({ status: 'delivered', attempts: 2 });
  });
  it('sends that end together are recorded by one statement, each row fenced by its own token', async () => {
    await appendMany(6);
    const sut = new WebhookDeliveryRepository(dataSource, durableWorkFor(dataSource), uncapped);
    const claims = await sut.claimDue(6, 60_000);
    expect(claims).toHaveLength(6);
    // The endpoint was failing: a delivered try ends its failure run.
    await dataSource.query(`UPDATE webhook_endpoints SET failing_since = clock_timestamp() WHERE id = $1`, [
      claims[0].endpointId,
    ]);
    const [stale, ...current] = claims;
    const queries = vi.spyOn(dataSource, 'query');

    const results = await Promise.all([
      sut.delivered(
        { id: stale.id, token: String(BigInt(stale.token) - 1n) },
        { statusCode: 200, error: null, durationMs: 1 },
      ),
      ...current.map((c, i) => sut.delivered(c, { statusCode: 200 + i, error: null, durationMs: 10 + i })),
    ]);

    expect(queries).toHaveBeenCalledTimes(1);
    queries.mockRestore();
    expect(results).toEqual([false, true, true, true, true, true]);
    const rows = await dataSource.query<
      { id: string; status: string; code: number | null; ms: number | null; lease: string | null }[]
    >(
      `SELECT id, status, last_status_code AS code, last_duration_ms AS ms, lease_owner AS lease
       FROM webhook_deliveries WHERE id = ANY ($1::uuid[])`,
      [claims.map((c) => c.id)],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(stale.id)).toMatchObject({ status: 'pending', code: null });
    expect(byId.get(stale.id)?.lease).not.toBeNull();
    current.forEach((c, i) =>
      expect(byId.get(c.id)).toEqual({
        id: c.id,
        status: 'delivered',
        code: 200 + i,
        ms: 10 + i,
        lease: null,
      }),
    );
    const [endpoint] = await dataSource.query<{ failing_since: Date | null }[]>(
      `SELECT failing_since FROM webhook_endpoints WHERE id = $1`,
      [claims[0].endpointId],
    );
    expect(endpoint.failing_since).toBeNull();
    await dataSource.query(`UPDATE webhook_deliveries SET status = 'delivered', next_attempt_at = NULL`);
  });
});
