import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/test-app';

describe('service surface (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });
  const http = () => request(t.app.getHttpServer());

  it('liveness answers without touching dependencies', async () => {
    const res = await http().get('/health/live').expect(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('readiness reports database and migrations up', async () => {
    const res = await http().get('/health/ready').expect(200);
    expect(res.body.status).toBe('ok');
    expect(res.body.details.database.status).toBe('up');
    expect(res.body.details.migrations.status).toBe('up');
    expect(res.body.details.upstream).toMatchObject({ status: 'up', key: 'valid', environment: 'sandbox' });
  });

  it('readiness fails with 503 naming the upstream when the upstream rejects the key', async () => {
    // A production key sent to the sandbox environment: the upstream answers 401 (contract 5.4).
    const other = await startTestApp({}, { upstreamApiKey: 'trk_live_production_key_sent_to_sandbox_01' });
    try {
      const res = await request(other.app.getHttpServer()).get('/health/ready').expect(503);
      expect(res.body.error).toMatchObject({
        code: 'SERVICE_UNAVAILABLE',
        message: 'Not ready: upstream down',
      });
      expect(res.body.error.details.details.upstream.status).toBe('down');
      expect(res.body.error.details.details.database.status).toBe('up');
      expect(JSON.stringify(res.body)).not.toContain('trk_live_production_key');
      expect(other.logs.text).not.toContain('trk_live_production_key');
    } finally {
      await other.close();
    }
  });

  it('unknown routes are 404 in the documented error shape with the request id', async () => {
    const res = await http().get('/no/such/route').set('x-request-id', 'req-123').expect(404);
    expect(res.headers['x-request-id']).toBe('req-123');
    expect(res.body).toEqual({
      error: { code: 'NOT_FOUND', message: 'No GET route matches this path', requestId: 'req-123' },
    });
  });

  it('generates a request id when the caller sends none or an unsafe one', async () => {
    const a = await http().get('/health/live');
    expect(a.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const b = await http().get('/health/live').set('x-request-id', 'bad id with spaces');
    expect(b.headers['x-request-id']).not.toBe('bad id with spaces');
  });

  it('invalid JSON is a 400 that does not echo the body', async () => {
    const res = await http()
      .post('/health/live')
      .set('content-type', 'application/json')
      .send('{"secret":"s3cr3t-value');
    expect([400, 404]).toContain(res.status);
    expect(JSON.stringify(res.body)).not.toContain('s3cr3t-value');
    expect(res.body.error.requestId).toBeTruthy();
  });

  it('a body over the limit is 413 in the error shape', async () => {
    const res = await http()
      .post('/health/live')
      .set('content-type', 'application/json')
      .send(JSON.stringify({ blob: 'x'.repeat(200_000) }));
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('serves Prometheus metrics including the request histogram by route template', async () => {
    await http().get('/health/live');
    const res = await http().get('/metrics').expect(200);
    expect(res.headers['content-type']).toContain('text/plain');
    expect(res.text).toContain('process_cpu_user_seconds_total');
    expect(res.text).toMatch(
      /http_request_duration_seconds_count\{method="GET",route="\/health\/live",status="200"\} \d+/,
    );
  });

  it('serves the OpenAPI document and the docs UI', async () => {
    const res = await http().get('/docs/openapi.json').expect(200);
    expect(Object.keys(res.body.paths)).toEqual(
      expect.arrayContaining(['/health/live', '/health/ready', '/metrics']),
    );
    expect(res.body.components.schemas.ErrorResponse).toBeDefined();
    const ui = await http().get('/docs').expect(200);
    expect(ui.text).toContain('swagger');
  });

  it('sets security headers and no x-powered-by', async () => {
    const res = await http().get('/health/live');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-powered-by']).toBeUndefined();
  });

  it('logs one JSON line per request with method, route, status, duration and request id', async () => {
    await http().get('/health/live').set('x-request-id', 'log-line-check');
    const line = t.logs
      .records()
      .find((r) => r.requestId === 'log-line-check' && r.msg === 'request completed');
    expect(line).toMatchObject({ method: 'GET', route: '/health/live', status: 200 });
    expect(typeof line?.durationMs).toBe('number');
  });

  it('never logs the secrets a caller sends (canary)', async () => {
    const canary = `canary-${Math.random().toString(36).slice(2)}`;
    await http().get('/health/live').set('authorization', `Bearer ${canary}`).set('x-api-key', canary);
    await http()
      .get('/nope')
      .set('authorization', `Bearer ${canary}`)
      .set('x-api-key', canary)
      .set('cookie', `s=${canary}`);
    await http()
      .post('/health/live')
      .set('x-api-key', canary)
      .set('content-type', 'application/json')
      .send(`{"password":"${canary}"`);
    expect(t.logs.lines.length).toBeGreaterThan(3);
    expect(t.logs.text).not.toContain(canary);
  });
});
