import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { ServiceReplica } from '../../bench/chaos/service-replica';
import { generateApiKey } from '../../src/auth/api-key';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/sandbox.server';
import { STATUS_COOKIE } from '../../src/status/status.session';
import { BOTH_COUNTED, TwoReplicas } from '../support/two-replicas';

const FAILURE_BUDGET = 4;

/**
 * Issue 31 items 4 and 5 across two real service processes on one database: the failed-authentication budget of
 * a source address is the whole service's (each replica counts its share), on the API and on the status page's
 * login alike; and a status-page logout on one replica ends the session on the other at once.
 */
const login = (url: string, key: string) =>
  fetch(`${url}/status/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ key }),
    signal: AbortSignal.timeout(10_000),
  });
const panels = (url: string, cookie: string) =>
  fetch(`${url}/status/panels`, { headers: { cookie }, signal: AbortSignal.timeout(10_000) });

describe('failed authentications and status sessions across two replicas (e2e)', () => {
  const replicas = new TwoReplicas(inject('databaseAdminUrl'));
  const apiKey = replicas.apiKey;
  let sandbox: SandboxHandle;
  let a: ServiceReplica;
  let b: ServiceReplica;

  beforeAll(async () => {
    sandbox = await startSandbox({
      host: '127.0.0.1',
      port: 0,
      seed: 'auth-failures',
      events: 2,
      listings: 4,
    });
    ({ a, b } = await replicas.start({
      name: 'authfail',
      upstreamUrl: sandbox.url,
      waitLiveMs: 15_000,
      extra: {
        UPSTREAM_API_KEY: sandbox.admin.apiKey,
        SYNC_ENABLED: 'false',
        SYNC_ON_STARTUP: 'false',
        STATUS_PAGE_ENABLED: 'true',
        RATE_LIMIT_AUTH_FAILURES: String(FAILURE_BUDGET),
        RATE_LIMIT_WINDOW_MS: '600000',
        ...BOTH_COUNTED,
      },
    }));
  }, 180_000);

  afterAll(async () => {
    await replicas.stop();
    await sandbox?.close();
  });

  it('a status-page logout on one replica ends the session on the other; its 401 says WWW-Authenticate', async () => {
    const res = await login(a.url, apiKey);
    expect(res.status).toBe(204);
    const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0];
    expect(cookie.startsWith(`${STATUS_COOKIE}=`)).toBe(true);
    expect((await panels(b.url, cookie)).status).toBe(200);
    const out = await fetch(`${a.url}/status/logout`, {
      method: 'POST',
      headers: { cookie },
      signal: AbortSignal.timeout(10_000),
    });
    expect(out.status).toBe(204);
    // The copied cookie, replayed on the other replica: the session is over there too.
    const replayed = await panels(b.url, cookie);
    expect(replayed.status).toBe(401);
    expect(replayed.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await panels(a.url, cookie)).status).toBe(401);
  });

  it(`failed authentications of one address share one budget of ${FAILURE_BUDGET} across the replicas, status login included: then 429 with Retry-After`, async () => {
    const wrong = generateApiKey();
    const answers: number[] = [];
    for (let i = 0; i < FAILURE_BUDGET; i++) {
      const url = i % 2 === 0 ? a.url : b.url;
      const res =
        i < 2
          ? await fetch(`${url}/v1/me`, { headers: { authorization: `Bearer ${wrong}` } })
          : await login(url, wrong);
      answers.push(res.status);
    }
    expect(answers).toEqual(Array<number>(FAILURE_BUDGET).fill(401));
    for (const url of [a.url, b.url]) {
      // Over the budget on both replicas: refused before any key is looked at, the right key included.
      const me = await fetch(`${url}/v1/me`, { headers: { authorization: `Bearer ${apiKey}` } });
      expect(me.status).toBe(429);
      expect(Number(me.headers.get('retry-after'))).toBeGreaterThan(0);
      const page = await login(url, wrong);
      expect(page.status).toBe(429);
      expect(Number(page.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  });
});
