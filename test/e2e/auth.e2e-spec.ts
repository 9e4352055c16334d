import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { effectivePolicy } from '../../src/auth/access.decorators';
import { apiKeyChecksum, generateApiKey } from '../../src/auth/api-key';
import { ApiClientsService } from '../../src/auth/api-clients.service';
import { SCOPES, type Scope } from '../../src/auth/scopes';
import { AuthConfig } from '../../src/config/auth.config';
import {
  bearer,
  fastifyRoutes,
  issueTestKey,
  nestRoutes,
  type NestRoute,
  type TestClient,
} from '../support/auth-helpers';
import { startTestApp, type TestApp } from '../support/test-app';

/** Routes served by Fastify plugins rather than Nest controllers: the docs UI and documents only. */
const NON_NEST_ROUTES = /^\/docs(\/|\*|$)/;

function concrete(path: string): string {
  return path.replace(/:[A-Za-z]+/g, () => randomUUID());
}

describe('authentication and authorisation (e2e)', () => {
  let t: TestApp;
  const byScope = new Map<Scope, TestClient>();
  let revoked: TestClient;
  beforeAll(async () => {
    t = await startTestApp();
    for (const scope of SCOPES) byScope.set(scope, await issueTestKey(t.app, [scope], `only-${scope}`));
    revoked = await issueTestKey(t.app, ['catalog:read']);
    await t.app.get(ApiClientsService).revoke(revoked.id);
  });
  afterAll(async () => {
    await t.close();
  });
  const http = () => request(t.app.getHttpServer());
  const key = (scope: Scope) => (byScope.get(scope) as TestClient).key;

  it('GET /v1/me returns the calling client via Bearer and via x-api-key', async () => {
    const client = await issueTestKey(t.app, ['catalog:read', 'orders:write'], 'marketplace-backend');
    const viaBearer = await http().get('/v1/me').set(bearer(client.key)).expect(200);
    expect(viaBearer.body).toEqual({
      id: client.id,
      name: 'marketplace-backend',
      scopes: ['catalog:read', 'orders:write'],
      binding: null,
      anySubject: true,
    });
    const viaHeader = await http().get('/v1/me').set('x-api-key', client.key).expect(200);
    expect(viaHeader.body).toEqual(viaBearer.body);
  });

  describe('every authentication failure is the same 401', () => {
    const body = generateApiKey().slice(0, -7);
    const cases: [string, () => Record<string, string>][] = [
      ['no credentials', () => ({})],
      ['empty authorization header', () => ({ authorization: '' })],
      ['Bearer without a key', () => ({ authorization: 'Bearer ' })],
      [
        'Basic scheme',
        () => ({ authorization: `Basic ${Buffer.from(`u:${key('catalog:read')}`).toString('base64')}` }),
      ],
      ['key without scheme', () => ({ authorization: key('catalog:read') })],
      ['garbage', () => bearer('not-a-key')],
      ['very long value', () => bearer('x'.repeat(5000))],
      ['wrong prefix', () => bearer(key('catalog:read').replace('trb_live_', 'trb_test_'))],
      ['bad checksum', () => bearer(`${body}_${apiKeyChecksum(body) === '000000' ? '000001' : '000000'}`)],
      ['well-formed unknown key', () => bearer(generateApiKey())],
      ['unknown key in x-api-key', () => ({ 'x-api-key': generateApiKey() })],
      ['same prefix, different secret', () => bearer(samePrefixDifferentSecret(key('catalog:read')))],
      ['revoked key', () => bearer(revoked.key)],
      ['revoked key in x-api-key', () => ({ 'x-api-key': revoked.key })],
      ['two different keys', () => ({ ...bearer(key('catalog:read')), 'x-api-key': key('admin') })],
    ];
    it.each(cases)('%s → 401 UNAUTHORIZED, identical body', async (_name, headers) => {
      const reference = await http().get('/v1/me').set('x-request-id', 'ref');
      const res = await http().get('/v1/me').set(headers()).set('x-request-id', 'probe');
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(res.body).toEqual({ ...reference.body, error: { ...reference.body.error, requestId: 'probe' } });
      expect(res.body.error).toEqual({
        code: 'UNAUTHORIZED',
        message: expect.any(String),
        requestId: 'probe',
      });
    });
  });

  it.each([
    ['authorization', (k: string) => [`Bearer ${k}`, `Bearer ${k}`]],
    ['authorization', (k: string) => [`Bearer ${k}`, 'Bearer other']],
    ['x-api-key', (k: string) => [k, k]],
  ])('a repeated %s header is the same 401 (even when both carry the valid key)', async (name, values) => {
    const reference = await http().get('/v1/me').set('x-request-id', 'ref');
    const res = await http()
      .get('/v1/me')
      // An array value is sent as repeated header lines (superagent types allow arrays for Cookie only).
      .set(name, values(key('catalog:read')) as unknown as string)
      .set('x-request-id', 'ref');
    expect([res.status, res.headers['www-authenticate']]).toEqual([401, 'Bearer']);
    expect(res.body).toEqual(reference.body);
  });

  it('a known key lacking the scope gets 403 naming the missing scope', async () => {
    const res = await http()
      .get('/v1/admin/api-clients')
      .set(bearer(key('catalog:read')))
      .expect(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
    expect(res.body.error.message).toContain('admin');
    expect(res.body.error.details).toEqual({ requiredScope: 'admin' });
  });

  describe('route walk', () => {
    it('every registered route declares its access (Nest router and Fastify route table)', () => {
      const routes = nestRoutes(t.app);
      expect(routes.length).toBeGreaterThanOrEqual(8);
      const undeclared = routes.filter((r) => !r.policy).map((r) => `${r.method} ${r.path}`);
      expect(undeclared).toEqual([]);
      const nest = new Set(routes.map((r) => `${r.method} ${r.path}`));
      const fastify = t.app.getHttpAdapter().getInstance();
      for (const route of routes)
        expect(fastify.hasRoute({ method: route.method, url: route.path })).toBe(true);
      const table = fastifyRoutes(t.app);
      expect(table.map((r) => r.path)).toEqual(
        expect.arrayContaining(['/v1/me', '/v1/admin/api-clients/:id']),
      );
      const unknown = table
        .flatMap((r) => r.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${r.path}`))
        .filter((r) => !nest.has(r) && !NON_NEST_ROUTES.test(r.split(' ')[1]));
      expect(unknown).toEqual([]);
    });

    it('route × scope matrix: no caller is let in beyond its declaration', async () => {
      const routes = nestRoutes(t.app);
      const config = t.app.get(AuthConfig);
      const callers: [string, Scope | null][] = [
        ['no key', null],
        ...SCOPES.map((s): [string, Scope] => [s, s]),
      ];
      const surprises: string[] = [];
      for (const route of routes) {
        for (const [label, scope] of callers) {
          const res = await callRoute(http(), route, scope ? key(scope) : null);
          const expected = expectedOutcome(route, scope, config);
          const got = res.status === 401 ? 'deny-401' : res.status === 403 ? 'deny-403' : 'allow';
          const named =
            got !== 'deny-403' || String(res.body.error?.message).includes(requiredScope(route, config));
          if (got !== expected || !named) {
            surprises.push(`${route.method} ${route.path} as ${label}: ${res.status}, expected ${expected}`);
          }
        }
      }
      expect(routes.length * callers.length).toBeGreaterThanOrEqual(48);
      expect(surprises).toEqual([]);
      // Every route times every scope, one request at a time: it grows with each scope and route (watches:write
      // and /v1/watches took it past 30 s on the shared 2-core machine).
    }, 120_000);
  });

  describe('surface', () => {
    it('health and metrics are open; docs open outside production', async () => {
      const statuses = [];
      for (const path of ['/health/live', '/health/ready', '/metrics', '/docs/openapi.json', '/docs']) {
        statuses.push((await http().get(path)).status);
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200]);
    });

    it('no CORS by default: preflights and simple requests get no Access-Control headers', async () => {
      const preflight = await http()
        .options('/v1/me')
        .set('origin', 'https://evil.example')
        .set('access-control-request-method', 'GET');
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
      const simple = await http()
        .get('/v1/me')
        .set('origin', 'https://evil.example')
        .set(bearer(key('admin')));
      expect(simple.headers['access-control-allow-origin']).toBeUndefined();
      expect(simple.headers['x-powered-by']).toBeUndefined();
    });

    it('request log lines carry the client id and name, never the key', async () => {
      const client = byScope.get('catalog:read') as TestClient;
      await http().get('/v1/me').set(bearer(client.key)).set('x-request-id', 'who-called');
      const line = t.logs
        .records()
        .find((r) => r.requestId === 'who-called' && r.msg === 'request completed');
      expect(line).toMatchObject({ clientId: client.id, clientName: client.name, status: 200 });
      expect(t.logs.text).not.toContain(client.key);
    });
  });
});

describe('metrics behind the admin scope (METRICS_PUBLIC=false, e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ METRICS_PUBLIC: 'false' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('requires an admin key for /metrics; health stays open', async () => {
    const http = () => request(t.app.getHttpServer());
    const reader = await issueTestKey(t.app, ['catalog:read']);
    const admin = await issueTestKey(t.app, ['admin']);
    const statuses = [
      (await http().get('/metrics')).status,
      (await http().get('/metrics').set(bearer(reader.key))).status,
      (await http().get('/metrics').set(bearer(admin.key))).status,
      (await http().get('/health/live')).status,
    ];
    expect(statuses).toEqual([401, 403, 200, 200]);
  });
});

describe('docs in production (e2e)', () => {
  it('closed by default, open with DOCS_ENABLED=true', async () => {
    const pepper = { API_KEY_PEPPER: 'p'.repeat(40), CURSOR_SECRET: 'c'.repeat(40) };
    const statuses: number[] = [];
    for (const docs of [{}, { DOCS_ENABLED: 'true' }] as Record<string, string>[]) {
      const app = await startTestApp({ NODE_ENV: 'production', ...pepper, ...docs });
      try {
        statuses.push((await request(app.app.getHttpServer()).get('/docs/openapi.json')).status);
      } finally {
        await app.close();
      }
    }
    expect(statuses).toEqual([404, 200]);
  });
});

function callRoute(agent: ReturnType<typeof request>, route: NestRoute, apiKey: string | null): request.Test {
  const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
  const req = agent[method](concrete(route.path));
  if (apiKey) void req.set(bearer(apiKey));
  return ['post', 'put', 'patch'].includes(method) ? req.send({}) : req;
}

function requiredScope(route: NestRoute, config: AuthConfig): string {
  const policy = route.policy && effectivePolicy(route.policy, config);
  return policy?.kind === 'scope' ? policy.scope : '';
}

/**
 * Public to the guard but gated by the status page itself (src/status/status.access.ts): an admin key in a header
 * or its login cookie; a browser without either gets the login form (`/status`) or 401 (`/status/panels`).
 */
const STATUS_PAGE_NO_KEY: Record<string, 'allow' | 'deny-401'> = {
  '/status': 'allow',
  '/status/panels': 'deny-401',
};

/** What the declaration promises for a caller holding exactly `scope` (null: no key). */
function expectedOutcome(
  route: NestRoute,
  scope: Scope | null,
  config: AuthConfig,
): 'allow' | 'deny-401' | 'deny-403' {
  if (!route.policy) return scope ? 'deny-403' : 'deny-401';
  const statusPage = STATUS_PAGE_NO_KEY[route.path];
  if (statusPage) return scope === null ? statusPage : scope === 'admin' ? 'allow' : 'deny-403';
  const policy = effectivePolicy(route.policy, config);
  if (policy.kind === 'public') return 'allow';
  if (!scope) return 'deny-401';
  if (policy.kind === 'authenticated') return 'allow';
  return scope === policy.scope || scope === 'admin' ? 'allow' : 'deny-403';
}

/** Same lookup prefix and a valid checksum, different secret: passes parsing, fails the hash. */
function samePrefixDifferentSecret(key: string): string {
  const head = key.slice(0, 19);
  const tail = generateApiKey().slice(19, 52);
  const body = `${head}${tail}`;
  return `${body}_${apiKeyChecksum(body)}`;
}
