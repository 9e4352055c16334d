import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, issueTestKey, type TestClient } from '../support/auth-helpers';
import { CHECKOUT_TEST_ENV, market, orderBody, postOrder, waitFinal } from '../support/checkout-helpers';
import { startOwnCluster, type OwnCluster } from '../support/own-postgres';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitUntil } from '../support/wait';

type Phase = 'before' | 'down' | 'after';
interface Answer {
  phase: Phase;
  route: string;
  status: number;
  retryAfter: string | undefined;
  body: string;
}

/**
 * `pg_ctl restart -m immediate` under traffic, on a cluster of this file's own: while PostgreSQL is down or
 * starting up every route answers 503 with Retry-After and a coded body (never 500, never driver text), and
 * once it is back the same app answers 200/202 again without a restart.
 */
describe('PostgreSQL restarted under traffic (e2e, own cluster)', () => {
  let cluster: OwnCluster;
  let t: TestApp;
  let client: TestClient;
  let orderPath = '';
  let round = 0;

  beforeAll(async () => {
    cluster = await startOwnCluster();
    const databaseUrl = await cluster.createDatabase('bff_test_restart');
    // MIGRATIONS_RUN defaults to true: the app migrates the empty database at boot, as a replica would.
    t = await startTestApp({ ...CHECKOUT_TEST_ENV, DB_POOL_SIZE: '6' }, { databaseUrl });
    client = await issueTestKey(t.app, ['catalog:read', 'orders:write']);
    const { listing, buyer } = market(t.sandbox, 'restart-seed');
    const order = await postOrder(t.app, client.key, 'restart-seed', orderBody(listing, buyer));
    if (order.status !== 202) throw new Error(`seed order: ${order.status}`);
    orderPath = `/v1/orders/${order.body.id}`;
    const seeded = await waitFinal(t.app, client.key, order.body.id);
    if (seeded.state !== 'confirmed') throw new Error(`seed order: ${seeded.state}`);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await cluster?.destroy();
  });

  /** One request to each route at once; answers recorded under `phase`. */
  async function trafficRound(phase: Phase): Promise<Answer[]> {
    round++;
    const http = t.app.getHttpAdapter().getInstance();
    const { listing, buyer } = market(t.sandbox, `restart-${round}`);
    const requests = [
      { route: 'GET /v1/events', method: 'GET' as const, url: '/v1/events?limit=5' },
      {
        route: 'POST /v1/orders',
        method: 'POST' as const,
        url: '/v1/orders',
        headers: { 'content-type': 'application/json', 'idempotency-key': `restart-${round}` },
        payload: JSON.stringify(orderBody(listing, buyer)),
      },
      { route: 'GET /v1/orders/{id}', method: 'GET' as const, url: orderPath },
      { route: 'GET /health/ready', method: 'GET' as const, url: '/health/ready' },
    ];
    return Promise.all(
      requests.map(async ({ route, method, url, headers, payload }) => {
        const res = await http.inject({
          method,
          url,
          headers: { ...bearer(client.key), ...headers },
          payload,
        });
        const retryAfter = res.headers['retry-after'];
        return {
          phase,
          route,
          status: res.statusCode,
          retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined,
          body: res.body,
        };
      }),
    );
  }

  it('answers 503 with Retry-After (never 500) while it is down and starting, and 2xx again once it is back', async () => {
    const answers: Answer[] = [];
    answers.push(...(await trafficRound('before')));
    expect(answers.map((a) => a.status)).toEqual([200, 202, 200, 200]);

    await cluster.stopImmediately();
    // Down: rounds for a second and a half (every connection refused; pooled ones were cut).
    const downUntil = Date.now() + 1500;
    for (let i = 0; i < 50 && Date.now() < downUntil; i++) {
      answers.push(...(await trafficRound('down')));
      await new Promise((r) => setTimeout(r, 50));
    }
    // Starting (crash recovery), then up: rounds until every route answers 2xx again, bounded.
    const starting = cluster.start();
    let back = false;
    await waitUntil(
      async () => {
        const batch = await trafficRound('after');
        answers.push(...batch);
        back = batch.every((a) => a.status === 200 || a.status === 202);
        return back;
      },
      30_000,
      100,
    ).catch(() => undefined);
    await starting;
    expect(back).toBe(true);

    const failures = answers.filter((a) => a.status >= 500);
    expect(answers.filter((a) => a.status === 500)).toEqual([]);
    // Every failure is a 503 with Retry-After and a coded body without driver or SQL text.
    for (const answer of failures) {
      expect({ route: answer.route, status: answer.status, retryAfter: answer.retryAfter }).toEqual({
        route: answer.route,
        status: 503,
        retryAfter: expect.stringMatching(/^\d+$/),
      });
      const code = (JSON.parse(answer.body) as { error: { code: string } }).error.code;
      expect(['DATABASE_BUSY', 'SERVICE_UNAVAILABLE']).toContain(code);
      expect(`${answer.route} ${answer.body}`).not.toMatch(
        /ECONNREFUSED|127\.0\.0\.1|SELECT|terminat|at \w+ \(/i,
      );
    }
    // While it was down, each route that needs the database answered 503 (the test did hit the outage).
    // GET /v1/events may answer 200 from the response cache, which needs no database for a known body.
    const down = answers.filter((a) => a.phase === 'down');
    const downRoutes = new Set(down.filter((a) => a.status === 503).map((a) => a.route));
    for (const route of ['POST /v1/orders', 'GET /v1/orders/{id}', 'GET /health/ready']) {
      expect([...downRoutes]).toContain(route);
    }
    // Logged as a dependency state (a warning naming the driver's code), not as a bug with a stack.
    expect(t.logs.text).not.toContain('unhandled error');
    const warned = t.logs
      .records()
      .filter((r) => r.msg === 'module error answered by the global filter')
      .map((r) => (r.error as { code?: string }).code);
    expect(warned).toContain('ECONNREFUSED');
  }, 90_000);
});
