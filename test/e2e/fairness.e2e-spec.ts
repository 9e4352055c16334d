import request from 'supertest';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, issueTestKey, type TestClient } from '../support/auth-helpers';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitUntil } from '../support/wait';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * Issue 31 item 1, "one tenant stalls every tenant's webhooks": client A floods — pings to an endpoint that never
 * answers, a backlog of events to a dead one (connection refused), a queue of due orders — and client B's
 * deliveries and order drives keep their latency: B's p99 under the flood is within 2× of its p99 in an idle run,
 * or within FLOOR_MS (an absolute floor, so scheduling noise on a 2-core CI machine, where an idle p99 is a few
 * hundred ms, does not flake it; before the fix B waited for A's whole backlog: tens of seconds).
 *
 * The counts are the issue's (150 pings, 10,000 events, 1,000 orders) locally and a fifth of them in CI
 * (`CI` set), which still puts A's backlog far ahead of B in time and takes the run well under a minute.
 */
const SCALE = process.env.CI ? 0.2 : 1;
const PINGS = Math.round(150 * SCALE);
const DEAD_EVENTS = Math.round(10_000 * SCALE);
const ORDERS = Math.round(1_000 * SCALE);
const SAMPLES = 10;
const FLOOR_MS = 1_500;

const ENV = {
  LOG_LEVEL: 'warn',
  RATE_LIMIT_DEFAULT: '100000',
  WEBHOOKS_WORKER_INTERVAL_MS: '100',
  WEBHOOKS_WORKER_CONCURRENCY: '8',
  WEBHOOKS_ENDPOINT_MAX_IN_FLIGHT: '2',
  WEBHOOKS_CLIENT_MAX_IN_FLIGHT: '4',
  WEBHOOKS_DELIVERY_TIMEOUT_MS: '3000',
  WEBHOOKS_LEASE_MS: '5000',
  // A's pings pass the per-endpoint limit here, so what is tested is the worker's fairness, not the 429.
  WEBHOOKS_MANUAL_SENDS_PER_MINUTE: String(PINGS),
  CHECKOUT_WORKER_INTERVAL_MS: '100',
  CHECKOUT_WORKER_BATCH: '8',
  CHECKOUT_CLIENT_MAX_IN_FLIGHT: '4',
};

/** B's bound under the flood: twice its idle p99, or the absolute floor. */
const bound = (idleP99: number): number => Math.max(2 * idleP99, FLOOR_MS);

const p99 = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)] ?? 0;
};

describe('Fairness under abuse (e2e: one client floods, another keeps its latency)', () => {
  let t: TestApp;
  let server: ReturnType<TestApp['app']['getHttpServer']>;
  let dataSource: DataSource;
  let alice: TestClient;
  let bob: TestClient;
  let bobReceiver: WebhookReceiver;
  let hanging: WebhookReceiver;
  let samples = 0;

  beforeAll(async () => {
    t = await startTestApp(ENV);
    server = t.app.getHttpServer();
    dataSource = t.app.get(DataSource);
    alice = await issueTestKey(t.app, ['webhooks:write', 'orders:write']);
    bob = await issueTestKey(t.app, ['webhooks:write', 'orders:write']);
    bobReceiver = await WebhookReceiver.start();
    hanging = await WebhookReceiver.start();
    hanging.answer = () => 'hold';
  });
  afterAll(async () => {
    await t?.close();
    await bobReceiver?.close();
    await hanging?.close();
  });

  const register = async (client: TestClient, url: string, types: string[]): Promise<string> => {
    const res = await request(server)
      .post('/v1/webhooks/endpoints')
      .set(bearer(client.key))
      .send({ url, event_types: types })
      .expect(201);
    return (res.body as { id: string }).id;
  };

  /** `n` due orders of `clientId`, due `ageSeconds` ago (a recovery worker's backlog); their ids. */
  const queueOrders = async (clientId: string, n: number, ageSeconds: number): Promise<string[]> => {
    const tag = `q${++samples}-`;
    const rows = await dataSource.query<{ id: string }[]>(
      `INSERT INTO orders (client_id, idempotency_key, fingerprint, buyer_subject, buyer_address, event_id,
         ticket_id, expected_price_minor, state, recovery_point, next_attempt_at)
       SELECT $1, $2 || g, repeat('a', 64), 'buyer-' || $2 || g, 'addr', 9000000 + g, g, 1000, 'created',
         'revalidate', clock_timestamp() - make_interval(secs => $4)
       FROM generate_series(1, $3::int) g RETURNING id`,
      [clientId, tag, n, ageSeconds],
    );
    return rows.map((r) => r.id);
  };

  /**
   * One of B's samples: a due order of B is queued (its `order.created` is announced in the same transaction); how
   * long until the worker claims it and until B's receiver has its `order.created`.
   */
  const sampleB = async (): Promise<{ claimMs: number; deliveryMs: number }> => {
    const started = Date.now();
    const [orderId] = await queueOrders(bob.id, 1, 0);
    let claimMs = -1;
    let deliveryMs = -1;
    await waitUntil(
      async () => {
        if (claimMs < 0) {
          const [row] = await dataSource.query<{ claimed: boolean }[]>(
            `SELECT lease_token IS NOT NULL AS claimed FROM orders WHERE id = $1`,
            [orderId],
          );
          if (row?.claimed) claimMs = Date.now() - started;
        }
        if (deliveryMs < 0 && bobReceiver.received.some((r) => r.body.includes(orderId ?? '-')))
          deliveryMs = Date.now() - started;
        return claimMs >= 0 && deliveryMs >= 0;
      },
      60_000,
      20,
    );
    return { claimMs, deliveryMs };
  };

  const run = async (): Promise<{ claim: number; delivery: number }> => {
    const claims: number[] = [];
    const deliveries: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const { claimMs, deliveryMs } = await sampleB();
      claims.push(claimMs);
      deliveries.push(deliveryMs);
    }
    return { claim: p99(claims), delivery: p99(deliveries) };
  };

  it("B's order drives and deliveries keep their p99 (within 2× of idle) while A floods", async () => {
    await register(bob, bobReceiver.url, ['order.created']);
    const hangingId = await register(alice, hanging.url, ['transaction.final']);
    const deadId = await register(alice, 'http://127.0.0.1:9/', ['order.confirmed']);
    await run(); // warm-up: first compilations and connections are not B's latency
    const idle = await run();

    // A's flood: a backlog of events to a dead endpoint and of due orders, both older than anything of B's, and
    // pings to an endpoint that never answers (each send holds its slot until the delivery timeout).
    await dataSource.query(
      `SELECT outbox_append(outbox_event_id(), 'order.confirmed', 1::smallint, $1::uuid, '{"flood":true}'::jsonb)
       FROM generate_series(1, $2::int)`,
      [alice.id, DEAD_EVENTS],
    );
    await dataSource.query(
      `UPDATE webhook_deliveries SET next_attempt_at = clock_timestamp() - interval '1 hour' WHERE endpoint_id = $1`,
      [deadId],
    );
    await queueOrders(alice.id, ORDERS, 3600);
    for (let i = 0; i < PINGS; i += 25) {
      const batch = Array.from({ length: Math.min(25, PINGS - i) }, () =>
        request(server).post(`/v1/webhooks/endpoints/${hangingId}/ping`).set(bearer(alice.key)).expect(202),
      );
      await Promise.all(batch);
    }
    await waitUntil(() => hanging.heldCount > 0, 10_000, 20);

    const flooded = await run();

    // A still had work waiting when B's samples were taken (the flood was not simply over).
    const [left] = await dataSource.query<{ deliveries: number; orders: number }[]>(
      `SELECT (SELECT count(*)::int FROM webhook_deliveries WHERE endpoint_id = ANY($1::uuid[]) AND status = 'pending')
         AS deliveries,
       (SELECT count(*)::int FROM orders WHERE client_id = $2 AND recovery_point <> 'done') AS orders`,
      [[hangingId, deadId], alice.id],
    );
    expect(left?.deliveries ?? 0).toBeGreaterThan(0);
    // The caps: the hanging endpoint never holds more than its share of the sends.
    expect(hanging.heldCount).toBeLessThanOrEqual(2);

    expect(
      { claim: flooded.claim, delivery: flooded.delivery },
      `idle p99 ${JSON.stringify(idle)}, flooded p99 ${JSON.stringify(flooded)}, A left ${JSON.stringify(left)}`,
    ).toEqual({
      claim: Math.min(flooded.claim, bound(idle.claim)),
      delivery: Math.min(flooded.delivery, bound(idle.delivery)),
    });
  }, 120_000);

  it("pings and manual retries are rate-limited per endpoint: past the minute's share, 429 with Retry-After", async () => {
    const id = await register(bob, bobReceiver.url, ['transaction.final']);
    for (let i = 0; i < PINGS; i++)
      await request(server).post(`/v1/webhooks/endpoints/${id}/ping`).set(bearer(bob.key)).expect(202);
    const refused = await request(server)
      .post(`/v1/webhooks/endpoints/${id}/ping`)
      .set(bearer(bob.key))
      .expect(429);
    expect(refused.body.error.code).toBe('RATE_LIMITED');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
  }, 60_000);
});
