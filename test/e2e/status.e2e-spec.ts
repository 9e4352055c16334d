import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClientsService } from '../../src/auth/api-clients.service';
import type { StatusReport } from '../../src/status/status.report';
import { bearer, issueTestKey, type TestClient } from '../support/auth-helpers';
import {
  CHECKOUT_TEST_ENV,
  market,
  orderBody,
  postOrder,
  refreshMirror,
  waitFinal,
} from '../support/checkout-helpers';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitUntil } from '../support/wait';

/** The Set-Cookie answer as one string (supertest gives an array). */
function setCookie(res: request.Response): string {
  const value: unknown = res.headers['set-cookie'];
  return Array.isArray(value) ? value.join('\n') : typeof value === 'string' ? value : '';
}

const seriesTotal = (series: StatusReport['orders']['final_per_minute'], label: string): number =>
  (series.find((s) => s.label === label)?.points ?? []).reduce((a, p) => a + (p.value ?? 0), 0);

describe('Status page and GET /v1/admin/status (e2e)', () => {
  let t: TestApp;
  let admin: TestClient;
  let buyerClient: TestClient;
  const http = () => request(t.app.getHttpServer());
  const report = async (): Promise<StatusReport> =>
    (await http().get('/v1/admin/status').set(bearer(admin.key)).expect(200)).body as StatusReport;

  beforeAll(async () => {
    t = await startTestApp(
      { ...CHECKOUT_TEST_ENV, STATUS_RECORD_INTERVAL_MS: '200' },
      { sandbox: { landingDelayMs: 50 } },
    );
    admin = await issueTestKey(t.app, ['admin']);
    buyerClient = await issueTestKey(t.app, ['orders:write']);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('reports what was done: a sync pass, two confirmed orders, their upstream calls, this replica', async () => {
    const started = await http()
      .post('/v1/admin/sync')
      .set(bearer(admin.key))
      .send({ resource: 'events' })
      .expect(202);
    const passId = started.body.passId as string;
    await waitUntil(
      async () =>
        (await http().get(`/v1/admin/sync/${passId}`).set(bearer(admin.key))).body.status === 'completed',
      10_000,
    );
    for (const n of [1, 2]) {
      const { listing, buyer } = market(t.sandbox, `status-${n}`);
      await refreshMirror(t.app, listing.eventId);
      const placed = await postOrder(t.app, buyerClient.key, `status-${n}`, orderBody(listing, buyer));
      expect(placed.status).toBe(202);
      expect((await waitFinal(t.app, buyerClient.key, placed.body.id)).state).toBe('confirmed');
    }
    // The recorder adds this replica's upstream attempts every 200 ms.
    let sut = await report();
    await waitUntil(async () => {
      sut = await report();
      return sut.upstream.by_operation.some((o) => o.operation === 'submitTransaction' && o.requests >= 2);
    }, 5_000);

    const events = sut.sync.resources.find((r) => r.resource === 'events');
    expect(events?.last_pass).toMatchObject({
      id: passId,
      status: 'completed',
      failure_kind: null,
      error: null,
    });
    expect(events?.last_pass?.items).toBeGreaterThan(0);
    expect(events?.mirror_age_seconds).toEqual(expect.any(Number));
    expect(events?.next_pass_due_at).toBeNull(); // SYNC_ENABLED=false in tests
    expect(sut.sync.items_per_second.find((s) => s.label === 'events')?.points.length).toBeGreaterThanOrEqual(
      1,
    );

    expect(sut.orders.final_24h).toEqual({ confirmed: 2 });
    expect(sut.orders.attempts_24h).toEqual({ '1': 2 });
    expect(seriesTotal(sut.orders.final_per_minute, 'confirmed')).toBe(2);
    expect(
      sut.orders.time_to_final_ms.find((s) => s.label === 'p99')?.points.some((p) => (p.value ?? 0) > 0),
    ).toBe(true);
    expect(sut.orders.open_by_state).toEqual({});
    expect(sut.orders.oldest_open).toBeNull();
    expect(sut.orders.final_per_minute[0]?.points).toHaveLength(60);

    const submit = sut.upstream.by_operation.find((o) => o.operation === 'submitTransaction');
    expect(submit).toMatchObject({ errors: 0, throttled: 0 });
    expect(sut.upstream.requests_per_minute.map((s) => s.label)).toContain('submitTransaction');
    expect(sut.upstream.key_check).toMatchObject({ ok: true, code: null });

    expect(sut.webhooks).toEqual({ undelivered: 0, failed_24h: 0, endpoints: [] });
    expect(sut.replicas).toHaveLength(1);
    expect(sut.replicas[0]).toMatchObject({ live: true, version: expect.any(String) });
  });

  it('is for admin keys only: 401 without a key, 403 with a key lacking admin', async () => {
    await http().get('/v1/admin/status').expect(401);
    const res = await http().get('/v1/admin/status').set(bearer(buyerClient.key)).expect(403);
    expect(res.body.error.details).toEqual({ requiredScope: 'admin' });
  });

  it('shows a browser the login form, takes the key once, and answers with a session cookie that is not the key', async () => {
    const form = await http().get('/status').expect(200);
    expect(form.headers['content-type']).toMatch(/^text\/html/);
    expect(form.text).toContain('id="login"');
    expect(form.text).not.toContain('data-panel');

    await http()
      .post('/status/login')
      .send({ key: `${admin.key.slice(0, -1)}${admin.key.endsWith('x') ? 'y' : 'x'}` })
      .expect(401);
    await http().post('/status/login').send({ key: buyerClient.key }).expect(403);
    await http().post('/status/login').send({}).expect(400);

    const login = await http().post('/status/login').send({ key: admin.key }).expect(204);
    const cookie = setCookie(login);
    expect(cookie).toMatch(
      /^bff_status_session=[^;]+; Path=\/status; Max-Age=900; HttpOnly; SameSite=Strict$/,
    );
    expect(cookie).not.toContain(admin.key);
    expect(cookie).not.toContain(admin.key.slice(-12));

    const session = cookie.split(';')[0] ?? '';
    const page = await http().get('/status').set('cookie', session).expect(200);
    for (const panel of ['sync', 'orders', 'upstream', 'webhooks', 'replicas']) {
      expect(page.text).toContain(`data-panel="${panel}"`);
    }
    expect((await http().get('/status/panels').set('cookie', session).expect(200)).text).toContain(
      'data-panel',
    );
    // A tampered session is no session.
    const tampered = session.slice(0, -2) + (session.endsWith('AA') ? 'BB' : 'AA');
    expect((await http().get('/status').set('cookie', tampered).expect(200)).text).toContain('id="login"');
    await http().get('/status/panels').set('cookie', tampered).expect(401);
  });

  it('takes an admin key in a header, never in the URL', async () => {
    expect((await http().get('/status').set(bearer(admin.key)).expect(200)).text).toContain(
      'data-panel="orders"',
    );
    expect((await http().get('/status').set('x-api-key', admin.key).expect(200)).text).toContain(
      'data-panel',
    );
    await http().get('/status').set(bearer(buyerClient.key)).expect(403);
    await http().get('/status').set(bearer('not-a-key')).expect(401);
    for (const query of ['key', 'api_key', 'token', 'authorization']) {
      const res = await http()
        .get(`/status?${query}=${encodeURIComponent(admin.key)}`)
        .expect(200);
      expect(res.text).toContain('id="login"');
      expect(res.text).not.toContain('data-panel');
    }
    // Nor does a key in a URL reach a log line.
    expect(t.logs.text).not.toContain(admin.key);
  });

  it("uses the session cookie when a proxy's Basic auth comes with it; Basic alone gets the login form", async () => {
    const login = await http().post('/status/login').send({ key: admin.key }).expect(204);
    const session = setCookie(login).split(';')[0] ?? '';
    const basic = `Basic ${Buffer.from('operator:proxy-password').toString('base64')}`;
    const page = await http().get('/status').set('authorization', basic).set('cookie', session).expect(200);
    expect(page.text).toContain('data-panel="orders"');
    await http().get('/status/panels').set('authorization', basic).set('cookie', session).expect(200);
    expect((await http().get('/status').set('authorization', basic).expect(200)).text).toContain(
      'id="login"',
    );
    await http().get('/status/panels').set('authorization', basic).expect(401);
    // Any other scheme is still a wrong credential, cookie or not.
    await http().get('/status').set('authorization', 'Digest x').set('cookie', session).expect(401);
  });

  it('ends a session when its key is revoked', async () => {
    const other = await issueTestKey(t.app, ['admin']);
    const login = await http().post('/status/login').send({ key: other.key }).expect(204);
    const session = setCookie(login).split(';')[0] ?? '';
    expect((await http().get('/status/panels').set('cookie', session)).status).toBe(200);
    await t.app.get(ApiClientsService).revoke(other.id);
    expect((await http().get('/status/panels').set('cookie', session)).status).toBe(401);
  });

  it('serves its own script and style (no CDN), and logout clears the cookie', async () => {
    const js = await http().get('/status/assets/status.js').expect(200);
    expect(js.headers['content-type']).toMatch(/^text\/javascript/);
    expect(js.text).toContain("fetch('/status/panels'");
    expect((await http().get('/status/assets/status.css').expect(200)).headers['content-type']).toMatch(
      /^text\/css/,
    );
    const out = await http().post('/status/logout').expect(204);
    expect(setCookie(out)).toMatch(/^bff_status_session=; Path=\/status; Max-Age=0;/);
  });
});

describe('Status page with an upstream that refuses the key (e2e)', () => {
  let t: TestApp;
  let admin: TestClient;
  const http = () => request(t.app.getHttpServer());

  beforeAll(async () => {
    t = await startTestApp({}, { upstreamApiKey: 'trk_test_wrong_key_for_the_status_page_e2e_01' });
    admin = await issueTestKey(t.app, ['admin']);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('names why the pass failed (auth) and shows the failed key check', async () => {
    const started = await http().post('/v1/admin/sync').set(bearer(admin.key)).send({ resource: 'events' });
    expect(started.status).toBe(202);
    const passId = started.body.passId as string;
    await waitUntil(
      async () =>
        (await http().get(`/v1/admin/sync/${passId}`).set(bearer(admin.key))).body.status === 'failed',
      10_000,
    );
    const sut = (await http().get('/v1/admin/status').set(bearer(admin.key)).expect(200))
      .body as StatusReport;
    const events = sut.sync.resources.find((r) => r.resource === 'events');
    expect(events?.last_pass).toMatchObject({ id: passId, status: 'failed', failure_kind: 'auth' });
    expect(events?.last_completed_at).toBeNull();
    expect(sut.upstream.key_check).toMatchObject({ ok: false, code: 'UNAUTHORIZED' });
    const page = await http().get('/status').set(bearer(admin.key)).expect(200);
    expect(page.text).toContain('<span class="badge kind">auth</span>');
  });
});

describe('Status page with an upstream that never answers (e2e)', () => {
  let t: TestApp;
  let admin: TestClient;
  const http = () => request(t.app.getHttpServer());

  beforeAll(async () => {
    t = await startTestApp(
      { HEALTH_CHECK_TIMEOUT_MS: '300', UPSTREAM_READ_TIMEOUT_MS: '20000', UPSTREAM_DEADLINE_MS: '30000' },
      { sandbox: { faults: [{ operation: '*', kind: 'hang' }] } },
    );
    admin = await issueTestKey(t.app, ['admin']);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('still answers, in about HEALTH_CHECK_TIMEOUT_MS, saying the key check is pending', async () => {
    const started = Date.now();
    const sut = (await http().get('/v1/admin/status').set(bearer(admin.key)).expect(200))
      .body as StatusReport;
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(sut.upstream.key_check).toMatchObject({ ok: false, code: 'TIMEOUT' });
  });
});

const PRODUCTION_ENV = {
  NODE_ENV: 'production',
  API_KEY_PEPPER: 'status-e2e-pepper-0123456789abcdefghijklmnop',
  CURSOR_SECRET: 'status-e2e-cursor-0123456789abcdefghijklmnop',
};

/** Every route of the page, as a request to make (with a body for the posts). */
const PAGE_ROUTES: readonly { method: 'get' | 'post'; path: string; body?: object }[] = [
  { method: 'get', path: '/status' },
  { method: 'get', path: '/status/panels' },
  { method: 'get', path: '/status/assets/status.js' },
  { method: 'get', path: '/status/assets/status.css' },
  { method: 'post', path: '/status/login', body: {} },
  { method: 'post', path: '/status/login', body: { key: 'x' } },
  { method: 'post', path: '/status/logout' },
];

/** Status, error code and message of an answer (the request id differs from one answer to the next). */
const answer = (res: request.Response) => ({
  status: res.status,
  code: (res.body as { error?: { code?: string } }).error?.code,
  message: (res.body as { error?: { message?: string } }).error?.message,
});

describe('Status page in production (e2e)', () => {
  let t: TestApp;
  let admin: TestClient;
  const http = () => request(t.app.getHttpServer());

  beforeAll(async () => {
    t = await startTestApp(PRODUCTION_ENV);
    admin = await issueTestKey(t.app, ['admin']);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers every page route as an unknown route unless STATUS_PAGE_ENABLED=true; the JSON twin stays', async () => {
    const call = (route: (typeof PAGE_ROUTES)[number], path: string, headers: Record<string, string>) => {
      const req = http()[route.method](path).set(headers);
      return route.body === undefined ? req : req.send(route.body);
    };
    for (const route of PAGE_ROUTES) {
      const unknown = answer(await call(route, '/no-such-route', {}));
      expect(unknown).toEqual({
        status: 404,
        code: 'NOT_FOUND',
        message: `No ${route.method.toUpperCase()} route matches this path`,
      });
      // Without a credential and with an admin key alike: nothing says the page exists.
      expect(answer(await call(route, route.path, {}))).toEqual(unknown);
      expect(answer(await call(route, route.path, bearer(admin.key)))).toEqual(unknown);
    }
    expect((await http().get('/v1/admin/status').set(bearer(admin.key))).status).toBe(200);
  });
});

describe('Status page in production with STATUS_PAGE_ENABLED=true (e2e)', () => {
  let t: TestApp;
  let admin: TestClient;
  const http = () => request(t.app.getHttpServer());

  beforeAll(async () => {
    t = await startTestApp({ ...PRODUCTION_ENV, STATUS_PAGE_ENABLED: 'true' });
    admin = await issueTestKey(t.app, ['admin']);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('serves the page, its assets, the login (with a Secure cookie) and the logout', async () => {
    expect((await http().get('/status').set(bearer(admin.key)).expect(200)).text).toContain(
      'data-panel="orders"',
    );
    expect((await http().get('/status').expect(200)).text).toContain('id="login"');
    await http().get('/status/panels').expect(401);
    await http().get('/status/assets/status.js').expect(200);
    await http().get('/status/assets/status.css').expect(200);
    const invalid = await http().post('/status/login').send({}).expect(400);
    expect(JSON.stringify(invalid.body)).toContain('key');
    const login = await http().post('/status/login').send({ key: admin.key }).expect(204);
    const cookie = setCookie(login);
    expect(cookie).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
    const session = cookie.split(';')[0] ?? '';
    expect((await http().get('/status/panels').set('cookie', session).expect(200)).text).toContain(
      'data-panel="webhooks"',
    );
    expect(setCookie(await http().post('/status/logout').expect(204))).toMatch(
      /^bff_status_session=; Path=\/status; Max-Age=0; HttpOnly; SameSite=Strict; Secure$/,
    );
  });
});
