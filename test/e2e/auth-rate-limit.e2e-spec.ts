import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, issueTestKey } from '../support/auth-helpers';
import { startTestApp, type TestApp } from '../support/test-app';

const LIMIT = 30;
const EXCESS = 50;

describe('per-client rate limits (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      RATE_LIMIT_WINDOW_MS: '60000',
      RATE_LIMIT_DEFAULT: String(LIMIT),
      RATE_LIMIT_ADMIN: '5',
    });
  });
  afterAll(async () => {
    await t.close();
  });
  const http = () => request(t.app.getHttpServer());

  it(`N+${EXCESS} requests in one window: exactly ${EXCESS} get 429 with Retry-After; another client is unaffected`, async () => {
    const noisy = await issueTestKey(t.app, ['catalog:read']);
    const quiet = await issueTestKey(t.app, ['catalog:read']);
    const responses: request.Response[] = [];
    // Sequential: in order, so the first N pass and the rest are refused.
    for (let i = 0; i < LIMIT + EXCESS; i++) {
      responses.push(await http().get('/v1/me').set(bearer(noisy.key)).set('x-request-id', `noisy-${i}`));
    }
    const statuses = responses.map((r) => r.status);
    expect(statuses.slice(0, LIMIT).every((s) => s === 200)).toBe(true);
    const refused = responses.slice(LIMIT);
    expect(refused.map((r) => r.status)).toEqual(Array(EXCESS).fill(429));
    for (const res of refused) {
      const retryAfter = Number(res.headers['retry-after']);
      expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
      expect(res.body.error).toEqual({
        code: 'RATE_LIMITED',
        message: expect.stringContaining(`${LIMIT} requests per 60 s`),
        requestId: expect.stringMatching(/^noisy-/),
      });
    }
    await http().get('/v1/me').set(bearer(quiet.key)).expect(200);
  });

  it('buckets are per scope: exhausting admin routes leaves key-only routes of the same client alone', async () => {
    const admin = await issueTestKey(t.app, ['admin']);
    for (let i = 0; i < 5; i++) await http().get('/v1/admin/api-clients').set(bearer(admin.key)).expect(200);
    const refused = await http().get('/v1/admin/api-clients').set(bearer(admin.key)).expect(429);
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    await http().get('/v1/me').set(bearer(admin.key)).expect(200);
  });

  it('429 answers carry the same X-RateLimit-* headers as 200s (remaining 0)', async () => {
    const admin = await issueTestKey(t.app, ['admin']);
    const names = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];
    const rateHeaders = (res: request.Response): (string | undefined)[] =>
      names.map((name) => res.headers[name] as string | undefined);
    const passed: request.Response[] = [];
    for (let i = 0; i < 5; i++) passed.push(await http().get('/v1/admin/api-clients').set(bearer(admin.key)));
    const refused = await http().get('/v1/admin/api-clients').set(bearer(admin.key)).expect(429);
    expect(passed.map((r) => rateHeaders(r).slice(0, 2))).toEqual(
      [4, 3, 2, 1, 0].map((left) => ['5', String(left)]),
    );
    const [limit, remaining, reset] = rateHeaders(refused);
    expect([limit, remaining]).toEqual(['5', '0']);
    expect(Number(reset)).toBeGreaterThanOrEqual(1);
    expect(Number(reset)).toBeLessThanOrEqual(60);
  });

  it('unauthenticated and public requests are not counted against any client', async () => {
    const client = await issueTestKey(t.app, ['catalog:read']);
    const statuses = new Set<number>();
    for (let i = 0; i < LIMIT + 5; i++) statuses.add((await http().get('/health/live')).status);
    expect([...statuses]).toEqual([200]);
    for (let i = 0; i < 5; i++) statuses.add((await http().get('/v1/me')).status);
    expect([...statuses]).toEqual([200, 401]);
    const me = await http().get('/v1/me').set(bearer(client.key));
    expect(me.status).toBe(200);
  });
});
