import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawExchange } from '../support/raw-http';
import { startTestApp, type TestApp } from '../support/test-app';

describe('malformed and non-JSON requests (e2e)', () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen(0, '127.0.0.1');
    port = Number(new URL(await t.app.getUrl()).port);
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([
    ['text/plain', 'name=a'],
    ['application/x-www-form-urlencoded', 'name=a&scopes=admin'],
    ['application/xml', '<a/>'],
  ])('a %s body is a 415 in the error shape: the API speaks JSON only', async (type, body) => {
    const res = await request(t.app.getHttpServer())
      .post('/v1/admin/api-clients')
      .set('content-type', type)
      .send(body);
    expect(res.status).toBe(415);
    expect(res.body.error).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE' });
  });

  it('a request too malformed to route still gets the documented error shape', async () => {
    const answer = await rawExchange(
      port,
      'GET /health/live HTTP/1.1\r\nHost: x\r\nBroken header line\r\n\r\n',
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as {
      error: Record<string, unknown>;
    };
    expect(body.error).toMatchObject({ code: 'BAD_REQUEST', message: 'Malformed HTTP request' });
    expect(typeof body.error.requestId).toBe('string');
  });
});
