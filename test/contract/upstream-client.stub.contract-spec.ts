import { HttpService } from '@nestjs/axios';
import { Test } from '@nestjs/testing';
import { HealthIndicatorService } from '@nestjs/terminus';
import { describe, expect, it } from 'vitest';
import { MetricsModule } from '../../src/metrics/metrics.module';
import { MetricsService } from '../../src/metrics/metrics.service';
import { UpstreamClient } from '../../src/upstream/upstream.client';
import { UpstreamError } from '../../src/upstream/upstream.error';
import { UpstreamHealthIndicator } from '../../src/upstream/upstream.health';
import { UpstreamModule } from '../../src/upstream/upstream.module';
import { runUpstreamCheck } from '../../src/upstream-check.cli';
import { waitUntil } from '../support/wait';
import {
  CANARY,
  SIGNED_TX,
  cancel,
  failure,
  frozenClock,
  json,
  stubHarness,
  signedBody,
} from './upstream-client.support';

describe('UpstreamClient against stub servers', () => {
  const { stub, client } = stubHarness();

  describe('status classes not produced by the sandbox', () => {
    it.each([
      [422, 'REJECTED', 1],
      [418, 'REJECTED', 1],
      [501, 'UNAVAILABLE', 1],
      [204, 'BAD_RESPONSE', 1],
      [302, 'BAD_RESPONSE', 1],
      [504, 'UNAVAILABLE', 3],
    ])('HTTP %d → %s after %d attempt(s)', async (status, code, attempts) => {
      const server = await stub((_req, res) => {
        res.writeHead(status, status === 302 ? { location: 'http://127.0.0.1:1/elsewhere' } : {});
        res.end();
      });
      const error = await failure(() => client(server).client.getProtocolConfig());
      expect([error.code, error.status, error.attempts]).toEqual([code, status, attempts]);
      expect(server.hits).toHaveLength(attempts);
    });

    it.each([
      [204, true],
      [302, true],
      [501, true],
      [400, false],
      [409, false],
    ])(
      'a write answered %d: outcomeUnknown=%s (only a 4xx proves it did not run)',
      async (status, unknown) => {
        const server = await stub((_req, res) => {
          res.writeHead(status);
          res.end();
        });
        const t = client(server);
        const submit = await failure(() => t.client.submitTransaction({ signedTransaction: SIGNED_TX }));
        const sign = await failure(() => t.client.signUserTransaction('s1', cancel, 'order-2xx'));
        expect([submit.outcomeUnknown, sign.outcomeUnknown]).toEqual([unknown, unknown]);
        expect([submit.attempts, sign.attempts]).toEqual([1, 1]);
      },
    );

    it('retries signing with the same idempotency key and the same body, never a new key', async () => {
      const server = await stub((_req, res, _body, hit) =>
        hit < 3 ? json(res, 503, 'busy') : json(res, 200, signedBody),
      );
      const signed = await client(server).client.signUserTransaction('s1', cancel, 'order-42', {
        requestId: 'req-abc',
      });
      expect(signed.custodialTransactionId).toBe(signedBody.custodialTransactionId);
      expect(server.hits.map((h) => h.headers['idempotency-key'])).toEqual([
        'order-42',
        'order-42',
        'order-42',
      ]);
      expect(new Set(server.hits.map((h) => h.body)).size).toBe(1);
      expect(server.hits.map((h) => h.headers['x-request-id'])).toEqual(['req-abc', 'req-abc', 'req-abc']);
      expect(server.hits[0].headers['x-api-key']).toBe(CANARY);
    });

    it('a signed transaction with an extra field is BAD_RESPONSE (strict) with no excerpt of the signed bytes', async () => {
      const server = await stub((_req, res) => json(res, 200, { ...signedBody, extra: 1 }));
      const error = await failure(() => client(server).client.signUserTransaction('s1', cancel, 'order-43'));
      expect([error.code, error.attempts, error.outcomeUnknown]).toEqual(['BAD_RESPONSE', 1, true]);
      expect(error.excerpt).toBeUndefined();
    });

    it('a hanging server: TIMEOUT within the deadline, and no connection left open on either side', async () => {
      const server = await stub(() => undefined);
      const t = client(server, { timeouts: { readMs: 100, signMs: 100, submitMs: 100, deadlineMs: 350 } });
      const started = Date.now();
      const error = await failure(() => t.client.listUpcomingEvents());
      expect(error.code).toBe('TIMEOUT');
      expect(Date.now() - started).toBeLessThan(350 + 100);
      await waitUntil(() => server.openConnections() === 0 && t.connectionStats().inUse === 0, 1_000, 10);
    });

    it("the caller's AbortSignal cancels a call (TIMEOUT, outcome unknown for writes)", async () => {
      const server = await stub(() => undefined);
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);
      const error = await failure(() =>
        client(server).client.submitTransaction(
          { signedTransaction: SIGNED_TX },
          { signal: controller.signal },
        ),
      );
      expect([error.code, error.outcomeUnknown, error.attempts]).toEqual(['TIMEOUT', true, 1]);
    });
  });

  describe('breaker, concurrency cap and keep-alive', () => {
    it('opens the circuit on sustained failure, fails fast while open, closes after a good trial', async () => {
      let healthy = false;
      const server = await stub((_req, res) =>
        healthy ? json(res, 200, { stablecoin_decimals: 6 }) : json(res, 503, {}),
      );
      const t = client(server, { breaker: { consecutiveFailures: 3, halfOpenAfterMs: 200 } });
      const first = await failure(() => t.client.getProtocolConfig());
      expect([first.code, first.attempts]).toEqual(['UNAVAILABLE', 3]);
      const fast = await failure(() => t.client.getProtocolConfig());
      expect(fast.code).toBe('UNAVAILABLE');
      expect(fast.message).toContain('circuit open');
      expect(fast.attempts).toBe(1);
      expect(server.hits).toHaveLength(3);
      expect(await t.metrics.render()).toContain('upstream_circuit_state 1');
      healthy = true;
      await new Promise((resolve) => setTimeout(resolve, 250));
      expect((await t.client.getProtocolConfig()).stablecoinDecimals).toBe(6);
      expect(await t.metrics.render()).toContain('upstream_circuit_state 0');
    });

    it('caps in-flight requests, queues the rest, and fails fast when the queue is full', async () => {
      let inFlight = 0;
      let peak = 0;
      const server = await stub((_req, res) => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        setTimeout(() => {
          inFlight--;
          json(res, 200, { stablecoin_decimals: 2 });
        }, 40);
      });
      const t = client(server, { concurrency: { maxInFlight: 2, maxQueued: 3 } });
      const results = await Promise.allSettled(Array.from({ length: 6 }, () => t.client.getProtocolConfig()));
      expect(peak).toBe(2);
      const rejected = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
      expect(rejected).toHaveLength(1);
      expect(rejected[0]).toMatchObject({ code: 'UNAVAILABLE' });
      expect(server.hits).toHaveLength(5);
      // Keep-alive: at most two connections for five requests.
      expect(t.connectionStats().idle).toBeLessThanOrEqual(2);
    });
  });

  describe('secrets and observability', () => {
    it('the upstream key appears in no log line, error, excerpt or metric (canary)', async () => {
      const echo = `key=${CANARY} tx=${SIGNED_TX} claim=https://claim.example/private/abc`;
      const server = await stub((req, res, _body, hit) => {
        if (req.url?.startsWith('/indexer/events')) return json(res, hit === 1 ? 401 : 400, echo);
        if (req.url?.startsWith('/wallets')) return json(res, 200, signedBody);
        if (req.url?.startsWith('/transactions'))
          return json(res, 200, { echo, custodialTransactionId: 'x' });
        return json(res, 429, echo, { 'retry-after': '1' });
      });
      const t = client(server);
      const errors: unknown[] = [];
      const collect = async (fn: () => Promise<unknown>) => {
        try {
          await fn();
        } catch (error) {
          errors.push(error);
        }
      };
      await collect(() => t.client.listUpcomingEvents());
      await collect(() => t.client.listUpcomingEvents());
      await collect(() => t.client.getProtocolConfig());
      await collect(() => t.client.signUserTransaction('s', cancel, 'order-canary'));
      await collect(() => t.client.submitTransaction({ signedTransaction: SIGNED_TX }));
      await t.client.verifyKey();
      expect(errors.length).toBeGreaterThanOrEqual(4);
      const everything = [
        ...t.logs.lines,
        ...errors.map((e) => `${String(e)} ${JSON.stringify(e)} ${(e as UpstreamError).excerpt ?? ''}`),
        await t.metrics.render(),
      ].join('\n');
      expect(everything).not.toContain(CANARY);
      expect(everything).not.toContain(SIGNED_TX);
      expect(everything).not.toContain('claim.example');
      expect(t.logs.lines.length).toBeGreaterThanOrEqual(6);
      for (const line of t.logs.lines) expect(line).not.toMatch(/x-api-key|authorization/i);
    });

    it('logs one line per attempt with operation, status, duration, attempt and request id', async () => {
      const server = await stub((_req, res, _body, hit) =>
        hit === 1 ? json(res, 502, {}) : json(res, 200, { stablecoin_decimals: 0 }),
      );
      const t = client(server);
      await t.client.getProtocolConfig({ requestId: 'corr-1' });
      const lines = t.logs.lines.map((l) => JSON.parse(l) as { upstream: Record<string, unknown> });
      expect(
        lines.map((l) => [l.upstream.operation, l.upstream.status, l.upstream.attempt, l.upstream.requestId]),
      ).toEqual([
        ['getProtocolConfig', '502', 1, 'corr-1'],
        ['getProtocolConfig', '200', 2, 'corr-1'],
      ]);
      expect(typeof lines[0].upstream.durationMs).toBe('number');
      const metrics = await t.metrics.render();
      expect(metrics).toContain('upstream_requests_total{operation="getProtocolConfig",status="502"} 1');
      expect(metrics).toContain(
        'upstream_retries_total{operation="getProtocolConfig",reason="UNAVAILABLE"} 1',
      );
      expect(metrics).toContain('upstream_request_duration_seconds_bucket');
    });
  });

  describe('readiness and the key check', () => {
    it('a 401 on any call invalidates a cached good verdict; readiness then reports the key', async () => {
      let keyValid = true;
      const server = await stub((_req, res) =>
        keyValid ? json(res, 200, { items: [], next_cursor: null }) : json(res, 401, ''),
      );
      const t = client(server, { keyCheckTtlMs: 60_000 });
      const sut = new UpstreamHealthIndicator(t.client, new HealthIndicatorService());
      expect(await sut.check('upstream', 1_000)).toEqual({
        upstream: { status: 'up', environment: 'sandbox', key: 'valid' },
      });
      keyValid = false;
      await failure(() => t.client.listUpcomingEvents());
      const down = await sut.check('upstream', 1_000);
      expect(down.upstream).toMatchObject({ status: 'down', key: 'rejected', code: 'UNAUTHORIZED' });
      expect(JSON.stringify(down)).not.toContain(CANARY);
    });

    it('a cached 401 verdict is reused for the TTL: readiness probes do not each hit the upstream', async () => {
      const server = await stub((_req, res) => json(res, 401, ''));
      const t = client(server, { keyCheckTtlMs: 60_000, clock: frozenClock() });
      const sut = new UpstreamHealthIndicator(t.client, new HealthIndicatorService());
      for (let probe = 0; probe < 3; probe++) {
        expect((await sut.check('upstream', 1_000)).upstream).toMatchObject({
          status: 'down',
          key: 'rejected',
        });
      }
      expect(server.hits).toHaveLength(1);
    });

    it('an unreachable upstream is reported but keeps readiness up unless configured otherwise', async () => {
      const server = await stub((_req, res) => json(res, 503, {}));
      const lenient = new UpstreamHealthIndicator(client(server).client, new HealthIndicatorService());
      expect((await lenient.check('upstream', 1_000)).upstream).toMatchObject({
        status: 'up',
        reachable: false,
      });
      const strict = new UpstreamHealthIndicator(
        client(server, { readinessRequiresReachable: true }).client,
        new HealthIndicatorService(),
      );
      expect((await strict.check('upstream', 1_000)).upstream).toMatchObject({
        status: 'down',
        code: 'UNAVAILABLE',
      });
    });

    it('UpstreamModule.forRoot provides the client and the health indicator', async () => {
      const server = await stub((_req, res) => json(res, 200, { items: [], next_cursor: null }));
      const moduleRef = await Test.createTestingModule({
        imports: [
          MetricsModule,
          UpstreamModule.forRoot({ baseUrl: server.url, apiKey: CANARY, environment: 'sandbox' }),
        ],
      }).compile();
      try {
        expect((await moduleRef.get(UpstreamClient).verifyKey()).ok).toBe(true);
        expect(moduleRef.get(UpstreamHealthIndicator)).toBeInstanceOf(UpstreamHealthIndicator);
        // Requests go through @nestjs/axios's HttpService, configured for the upstream (no redirects).
        const http = moduleRef.get(HttpService);
        expect(http.axiosRef.defaults.baseURL).toBe(server.url);
        expect(http.axiosRef.defaults.maxRedirects).toBe(0);
        expect(await moduleRef.get(MetricsService).render()).toContain(
          'upstream_requests_total{operation="verifyKey",status="200"} 1',
        );
      } finally {
        await moduleRef.close();
      }
    });
  });

  describe('npm run upstream:check', () => {
    it('exit 0 for the in-process sandbox, 1 for a rejected key, 2 for an unreachable upstream', async () => {
      const lines: string[] = [];
      const out = (line: string) => lines.push(line);
      const silent = (await import('pino')).default({ level: 'silent' });
      expect(await runUpstreamCheck({}, out, silent)).toBe(0);
      const rejecting = await stub((_req, res) => json(res, 401, ''));
      expect(
        await runUpstreamCheck({ UPSTREAM_BASE_URL: rejecting.url, UPSTREAM_API_KEY: CANARY }, out, silent),
      ).toBe(1);
      const gone = await stub((_req, res) => json(res, 200, {}));
      await gone.close();
      expect(
        await runUpstreamCheck(
          { UPSTREAM_BASE_URL: gone.url, UPSTREAM_API_KEY: CANARY, UPSTREAM_READ_TIMEOUT_MS: '200' },
          out,
          silent,
        ),
      ).toBe(2);
      expect(await runUpstreamCheck({ UPSTREAM_ENVIRONMENT: 'production' }, out, silent)).toBe(1);
      expect(lines[0]).toMatch(/OK/);
      expect(lines[1]).toMatch(/KEY REJECTED/);
      expect(lines[2]).toMatch(/UNREACHABLE/);
      expect(lines[3]).toMatch(/UPSTREAM_API_KEY/);
      expect(lines.join('\n')).not.toContain(CANARY);
    });
  });
});
