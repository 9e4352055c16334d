import { Body, Controller, Get, Module, Param, Post } from '@nestjs/common';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Public } from '../../src/auth/access.decorators';
import { SECURITY_HEADERS } from '../../src/common/security-headers';
import {
  UPSTREAM_ERROR_CODES,
  UpstreamError,
  type UpstreamErrorCode,
} from '../../src/upstream/upstream.error';
import { startTestApp, type TestApp } from '../support/test-app';
import { parseRawAnswer, rawExchange, type RawAnswer } from '../support/raw-http';

class NoteDto {
  @IsOptional()
  @IsString()
  @MaxLength(50)
  name?: string;
}

/** `{"a":{"a":…{}}}`, `depth` objects deep. */
function nested(depth: number): string {
  return '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);
}

/** Test-only routes: a feature that forgets to catch an UpstreamError, and a strict DTO body. */
@Public()
@Controller('v1/test-fixtures/http')
class HttpFixtureController {
  @Get('upstream-fails/:code')
  failUpstream(@Param('code') code: string): never {
    throw new UpstreamError({
      code: code as UpstreamErrorCode,
      operation: 'listUpcomingEvents',
      message: 'upstream said trb_live_secret-excerpt',
      status: 503,
      attempts: 3,
      retryAfterMs: code === 'RATE_LIMITED' ? 2_500 : undefined,
      excerpt: 'trb_live_secret-excerpt',
    });
  }

  @Post('notes')
  create(@Body() body: NoteDto): { ok: true; name: string | null } {
    return { ok: true, name: body.name ?? null };
  }
}

@Module({ controllers: [HttpFixtureController] })
class HttpFixtureModule {}

/** One raw exchange, parsed (the server closes the connection after these answers). */
async function rawAnswer(port: number, bytes: string): Promise<RawAnswer> {
  return parseRawAnswer(await rawExchange(port, bytes));
}

function securityHeadersOf(headers: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.keys(SECURITY_HEADERS).map((name) => [name, headers[name]]));
}

/** The facts of a complete answer (see `facts`). */
function complete(status: number, code: string): Record<string, unknown> {
  return {
    status,
    code,
    requestIdEchoed: true,
    contentType: 'application/json; charset=utf-8',
    securityHeaders: SECURITY_HEADERS,
    logged: [status],
  };
}

describe('HTTP hardening: every answer has the shape, a request id, the headers, a log line (e2e)', () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await startTestApp(
      { HTTP_REQUEST_TIMEOUT_MS: '600', HTTP_HEADERS_TIMEOUT_MS: '300' },
      { extraModules: [HttpFixtureModule] },
    );
    await t.app.listen(0, '127.0.0.1');
    port = Number(new URL(await t.app.getUrl()).port);
  });
  afterAll(async () => {
    await t.close();
  });

  /**
   * What the checks care about in a raw answer: status and code, a request id header equal to the
   * body's, the JSON content type, helmet's headers, and the statuses of its `request completed` lines.
   */
  function facts(answer: RawAnswer): Record<string, unknown> {
    const body = JSON.parse(answer.body) as { error: { code: string; requestId: string } };
    const logged = t.logs
      .records()
      .filter((r) => r.requestId === body.error.requestId && r.msg === 'request completed')
      .map((r) => r.status);
    return {
      status: answer.status,
      code: body.error.code,
      requestIdEchoed:
        body.error.requestId.length > 0 && answer.headers['x-request-id'] === body.error.requestId,
      contentType: answer.headers['content-type'],
      securityHeaders: securityHeadersOf(answer.headers),
      logged,
    };
  }

  const post = (body: string) =>
    request(t.app.getHttpServer())
      .post('/v1/test-fixtures/http/notes')
      .set('content-type', 'application/json')
      .send(body);

  it('the raw answers carry exactly the headers helmet gives a routed answer', async () => {
    const routed = await request(t.app.getHttpServer()).get('/health/live');
    expect(securityHeadersOf(routed.headers)).toEqual(SECURITY_HEADERS);
  });

  describe('an UpstreamError no feature caught', () => {
    it.each([
      ['UNAVAILABLE', 502, 'UPSTREAM_UNAVAILABLE'],
      ['BAD_RESPONSE', 502, 'UPSTREAM_UNAVAILABLE'],
      ['UNAUTHORIZED', 502, 'UPSTREAM_UNAVAILABLE'],
      ['TIMEOUT', 504, 'UPSTREAM_TIMEOUT'],
      ['RATE_LIMITED', 503, 'SERVICE_UNAVAILABLE'],
    ])('%s is a %i %s in the error shape, not a 500', async (upstreamCode, status, code) => {
      const res = await request(t.app.getHttpServer()).get(
        `/v1/test-fixtures/http/upstream-fails/${upstreamCode}`,
      );
      expect(res.status).toBe(status);
      expect(res.body.error).toMatchObject({
        code,
        details: { upstream: { operation: 'listUpcomingEvents', code: upstreamCode } },
      });
      expect(res.body.error.requestId).toBe(res.headers['x-request-id']);
      expect(res.text).not.toContain('secret');
      expect(res.headers['retry-after']).toBe(upstreamCode === 'RATE_LIMITED' ? '3' : undefined);
    });

    // Uncaught, an upstream 4xx answered a request this service built: our fault, not the caller's.
    it.each(['REJECTED', 'NOT_FOUND', 'CONFLICT'])(
      "%s is a 502 UPSTREAM_UNAVAILABLE (not the caller's 4xx), logged as a warning",
      async (upstreamCode) => {
        const res = await request(t.app.getHttpServer()).get(
          `/v1/test-fixtures/http/upstream-fails/${upstreamCode}`,
        );
        expect([res.status, res.body.error.code]).toEqual([502, 'UPSTREAM_UNAVAILABLE']);
        expect(res.body.error.details).toEqual({
          upstream: { operation: 'listUpcomingEvents', code: upstreamCode },
        });
        const lines = t.logs.records().filter((r) => r.requestId === res.body.error.requestId);
        expect(lines.map((l) => l.msg)).toContain('module error answered by the global filter');
        expect(res.text).not.toContain('secret');
      },
    );

    it('is logged as a warning without stack or upstream text, never as an unhandled error', async () => {
      const res = await request(t.app.getHttpServer()).get('/v1/test-fixtures/http/upstream-fails/TIMEOUT');
      const lines = t.logs.records().filter((r) => r.requestId === res.body.error.requestId);
      expect(lines.map((l) => l.msg)).toEqual([
        'module error answered by the global filter',
        'request completed',
      ]);
      expect(JSON.stringify(lines)).not.toContain('secret');
      expect(JSON.stringify(lines)).not.toContain('stack');
    });

    it('every upstream code maps to a non-500 status', async () => {
      const statuses: [string, number][] = [];
      for (const upstreamCode of UPSTREAM_ERROR_CODES) {
        const res = await request(t.app.getHttpServer()).get(
          `/v1/test-fixtures/http/upstream-fails/${upstreamCode}`,
        );
        statuses.push([upstreamCode, res.status]);
      }
      expect(statuses.filter(([, status]) => status >= 500 && ![502, 503, 504].includes(status))).toEqual([]);
    });
  });

  describe('bodies', () => {
    it('an array nested 1,500 deep (3 KB) is a 400 in the error shape, not a stack overflow', async () => {
      const res = await post('['.repeat(1500) + ']'.repeat(1500));
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({
        code: 'BAD_REQUEST',
        message: 'Request body nests deeper than 32 levels',
      });
    });

    it('an object nested 33 deep is refused, 32 deep reaches validation', async () => {
      expect((await post(nested(33))).body.error.code).toBe('BAD_REQUEST');
      const atLimit = await post(nested(32));
      expect(atLimit.status).toBe(400);
      expect(atLimit.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ field: 'a' }] });
    });

    it('brackets inside strings do not count as nesting', async () => {
      const res = await post(JSON.stringify({ name: '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[' }));
      expect(res.status).toBe(201);
    });

    it('3,000 unknown fields give a bounded 400 (20 fields listed, the rest counted)', async () => {
      // The first 20 names are 500 characters long (the body stays under BODY_LIMIT_BYTES).
      const fields = Object.fromEntries(
        Array.from({ length: 3000 }, (_, i) => [i < 20 ? `${'x'.repeat(500)}${i}` : `f${i}`, 1]),
      );
      const res = await post(JSON.stringify(fields));
      expect(res.status).toBe(400);
      const details = res.body.error.details as { field: string; problems: string[] }[];
      expect(details).toHaveLength(20);
      expect(details[0]).toEqual({
        field: `${'x'.repeat(64)}…`,
        problems: [`property ${'x'.repeat(64)}… should not exist`],
      });
      expect(res.body.error.message).toMatch(/ and 2980 more fields$/);
      expect(res.text.length).toBeLessThan(8_000);
    });

    it.each(['constructor', 'prototype', 'toString', '__proto__'])(
      'a field named %s is a 400 like any other unknown field',
      async (name) => {
        const res = await post(`{"name":"a","${name}":{"x":1}}`);
        expect(res.status).toBe(400);
        expect(res.body.error.code).toMatch(/^(VALIDATION_FAILED|BAD_REQUEST)$/);
      },
    );

    it('a field named constructor is reported by name', async () => {
      const res = await post('{"constructor":1}');
      expect(res.body.error).toMatchObject({
        code: 'VALIDATION_FAILED',
        details: [{ field: 'constructor' }],
      });
    });
  });

  describe('timeouts (HTTP_REQUEST_TIMEOUT_MS=600, HTTP_HEADERS_TIMEOUT_MS=300 here)', () => {
    it('a body that never finishes gets 408 and the connection is closed', async () => {
      const answer = await rawAnswer(
        port,
        'POST /v1/test-fixtures/http/notes HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n' +
          'content-length: 100\r\n\r\n{"name":',
      );
      expect(facts(answer)).toEqual(complete(408, 'REQUEST_TIMEOUT'));
    });

    it('headers that trickle in are cut with a 408', async () => {
      const answer = await rawAnswer(port, 'GET /health/live HTTP/1.1\r\nHost: x\r\nx-slow: a');
      expect(facts(answer)).toEqual(complete(408, 'REQUEST_TIMEOUT'));
    });
  });

  describe('requests the framework used to answer itself', () => {
    it('a bad percent-escape is a 400 that does not echo the path', async () => {
      const answer = await rawAnswer(
        port,
        'GET /v1/%zz/trb_live_secret HTTP/1.1\r\nHost: x\r\nconnection: close\r\n\r\n',
      );
      expect(facts(answer)).toEqual(complete(400, 'BAD_REQUEST'));
      expect(answer.body).not.toContain('secret');
    });

    it('an over-long path parameter is a 414 that does not echo the path', async () => {
      const answer = await rawAnswer(
        port,
        `GET /v1/admin/api-clients/${'trb_live_secret'.repeat(10)} HTTP/1.1\r\nHost: x\r\nconnection: close\r\n\r\n`,
      );
      expect(facts(answer)).toEqual(complete(414, 'URI_TOO_LONG'));
      expect(answer.body).not.toContain('secret');
    });

    it('an Expect header other than 100-continue is a 417', async () => {
      const answer = await rawAnswer(
        port,
        'GET /health/live HTTP/1.1\r\nHost: x\r\nexpect: something\r\nconnection: close\r\n\r\n',
      );
      expect(facts(answer)).toEqual(complete(417, 'EXPECTATION_FAILED'));
    });

    it('an HTTP/1.1 request without Host is a 400', async () => {
      const answer = await rawAnswer(port, 'GET /health/live HTTP/1.1\r\nconnection: close\r\n\r\n');
      expect(facts(answer)).toEqual(complete(400, 'BAD_REQUEST'));
    });

    it('malformed HTTP is a 400 with the request id and headers', async () => {
      const answer = await rawAnswer(port, 'GET /health/live HTTP/1.1\r\nHost: x\r\nBroken header\r\n\r\n');
      expect(facts(answer)).toEqual(complete(400, 'BAD_REQUEST'));
    });

    it('oversized headers are a 431', async () => {
      const answer = await rawAnswer(
        port,
        `GET /health/live HTTP/1.1\r\nHost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`,
      );
      expect(facts(answer)).toEqual(complete(431, 'HEADERS_TOO_LARGE'));
    });

    it('each of them is counted in the HTTP metric', async () => {
      const metrics = await request(t.app.getHttpServer()).get('/metrics');
      for (const status of [400, 408, 414, 417, 431]) {
        expect(metrics.text).toMatch(
          new RegExp(`http_request_duration_seconds_count\\{[^}]*status="${status}"`),
        );
      }
    });
  });
});
