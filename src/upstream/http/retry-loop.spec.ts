import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../upstream.error';
import { resolveUpstreamOptions, type UpstreamOptions } from '../upstream.options';
import { TransportError, UpstreamAttempt, type Answer, type HttpCall, type Transport } from './attempt';
import type { UpstreamClock } from './clock';
import { UpstreamMetrics } from './metrics';
import { RetryLoop } from './retry-loop';
import { waitUntil } from '../../../test/support/wait';

/** Virtual milliseconds: `sleep` moves the clock and returns at once; no real time passes. */
function virtualClock(): UpstreamClock & { sleeps: number[] } {
  let now = 1_000_000;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
      await Promise.resolve();
    },
  };
}

type Step = Answer | TransportError;

/** Answers from a script, one step per request; no socket anywhere. */
function fakeTransport(steps: Step[]): Transport & { sent: HttpCall[] } {
  const sent: HttpCall[] = [];
  return {
    sent,
    send: async (call) => {
      sent.push(call);
      const step = steps[Math.min(sent.length, steps.length) - 1];
      if (step instanceof TransportError) throw step;
      return step;
    },
  };
}

const ok: Answer = { status: 200, body: '{"ok":true}' };
const status = (code: number, retryAfter?: string): Answer => ({
  status: code,
  body: '',
  ...(retryAfter === undefined ? {} : { retryAfter }),
});
const reset = new TransportError(false, 'connection failed (ECONNRESET)');

function setup(steps: Step[], overrides: Partial<UpstreamOptions> = {}, wire?: Transport) {
  const clock = virtualClock();
  const options = resolveUpstreamOptions({
    baseUrl: 'http://127.0.0.1:1',
    apiKey: 'test-key',
    environment: 'sandbox',
    clock,
    random: () => 0.5,
    logger: { info: () => undefined, warn: () => undefined },
    retry: { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 1_000, retryAfterCapMs: 5_000 },
    timeouts: { readMs: 1_000, signMs: 1_000, submitMs: 1_000, deadlineMs: 20_000 },
    breaker: { consecutiveFailures: 100, halfOpenAfterMs: 60_000 },
    ...overrides,
  });
  const transport = fakeTransport(steps);
  const metrics = new UpstreamMetrics();
  const sut = new RetryLoop(options, new UpstreamAttempt(options, wire ?? transport, metrics), metrics);
  return { sut, clock, transport };
}

const read: HttpCall = {
  operation: 'getProtocolConfig',
  kind: 'read',
  method: 'GET',
  route: '/p',
  path: '/p',
};
const sign: HttpCall = { ...read, operation: 'signUserTransaction', kind: 'sign', method: 'POST' };

async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof UpstreamError) return error;
    throw error;
  }
  throw new Error('expected an UpstreamError');
}

describe(RetryLoop.name, () => {
  it.each([
    ['500', status(500)],
    ['502', status(502)],
    ['503', status(503)],
    ['504', status(504)],
    ['a lost connection', reset],
    ['429', status(429)],
  ])('what is retried: %s, then 200 → the answer after 2 attempts', async (_name, first) => {
    const { sut, transport } = setup([first, ok]);
    expect(await sut.execute(read)).toEqual({ body: ok.body, attempts: 2 });
    expect(transport.sent).toHaveLength(2);
  });

  it.each([
    ['501', status(501), 'UNAVAILABLE'],
    ['400', status(400), 'REJECTED'],
    ['401', status(401), 'UNAUTHORIZED'],
    ['403', status(403), 'FORBIDDEN'],
    ['404', status(404), 'NOT_FOUND'],
    ['409', status(409), 'CONFLICT'],
    ['204', status(204), 'BAD_RESPONSE'],
    ['302', status(302), 'BAD_RESPONSE'],
    ['an unreadable body', new TransportError(true, 'response body too large or unreadable'), 'BAD_RESPONSE'],
  ])('what is not retried: %s → %s after 1 attempt', async (_name, first, code) => {
    const { sut, transport } = setup([first, ok]);
    const error = await failure(sut.execute(read));
    expect([error.code, error.attempts]).toEqual([code, 1]);
    expect(transport.sent).toHaveLength(1);
  });

  it('how often: maxAttempts attempts, full-jitter backoff between them (virtual ms)', async () => {
    const { sut, clock, transport } = setup([status(503)]);
    const error = await failure(sut.execute(read));
    expect([error.code, error.status, error.attempts]).toEqual(['UNAVAILABLE', 503, 4]);
    // random 0.5 of min(1000, 100·2^(n-1)): 50, 100, 200.
    expect(clock.sleeps).toEqual([50, 100, 200]);
    expect(transport.sent).toHaveLength(4);
  });

  it('waits exactly the Retry-After of a 429, never less', async () => {
    const { sut, clock } = setup([status(429, '3'), ok]);
    expect((await sut.execute(read)).attempts).toBe(2);
    expect(clock.sleeps).toEqual([3_000]);
  });

  it('a Retry-After beyond the cap ends the call at once, handing the wait to the caller', async () => {
    const { sut, clock, transport } = setup([status(429, '60'), ok]);
    const error = await failure(sut.execute(read));
    expect([error.code, error.attempts, error.retryAfterMs]).toEqual(['RATE_LIMITED', 1, 60_000]);
    expect(clock.sleeps).toEqual([]);
    expect(transport.sent).toHaveLength(1);
  });

  it('a retry that cannot start before the deadline is not made', async () => {
    const { sut, clock, transport } = setup([status(503)], {
      timeouts: { readMs: 1_000, signMs: 1_000, submitMs: 1_000, deadlineMs: 120 },
    });
    const error = await failure(sut.execute(read));
    // Attempt 1, sleep 50, attempt 2; the next sleep (100) would end past the deadline (120).
    expect([error.code, error.attempts]).toEqual(['UNAVAILABLE', 2]);
    expect(clock.sleeps).toEqual([50]);
    expect(transport.sent).toHaveLength(2);
  });

  it('retries a write with the same request; a lost connection leaves its outcome unknown', async () => {
    const { sut, transport } = setup([reset], { retry: { maxAttempts: 2 } });
    const error = await failure(
      sut.execute({ ...sign, body: '{"b":1}', headers: { 'idempotency-key': 'k' } }),
    );
    expect([error.code, error.attempts, error.outcomeUnknown]).toEqual(['UNAVAILABLE', 2, true]);
    expect(new Set(transport.sent.map((c) => `${c.headers?.['idempotency-key']} ${c.body}`))).toEqual(
      new Set(['k {"b":1}']),
    );
  });

  it('a refused write (4xx) is known not to have run', async () => {
    const { sut } = setup([status(400)]);
    const error = await failure(sut.execute(sign));
    expect([error.code, error.outcomeUnknown]).toEqual(['REJECTED', false]);
  });

  describe("notAfter (the caller's lease deadline, performance.now())", () => {
    const slowRetries = {
      retry: { maxAttempts: 4, baseDelayMs: 20_000, maxDelayMs: 20_000, retryAfterCapMs: 5_000 },
      timeouts: { readMs: 1_000, signMs: 1_000, submitMs: 1_000, deadlineMs: 600_000 },
    };

    it('already past: no attempt is sent; TIMEOUT "not sent", known not to have run', async () => {
      const { sut, transport } = setup([ok]);
      const error = await failure(sut.execute({ ...sign, notAfter: performance.now() - 1 }));
      expect([error.code, error.attempts, error.outcomeUnknown]).toEqual(['TIMEOUT', 0, false]);
      expect(error.message).toMatch(/not sent/);
      expect(transport.sent).toHaveLength(0);
    });

    it('a retry whose start would be past it is not made: the last error, its outcome still unknown', async () => {
      // Backoff 10 s (random 0.5 of 20 s), the lease ends in 5 s: the second attempt would start after it.
      const { sut, clock, transport } = setup([status(503)], slowRetries);
      const error = await failure(sut.execute({ ...sign, notAfter: performance.now() + 5_000 }));
      expect([error.code, error.status, error.attempts, error.outcomeUnknown]).toEqual([
        'UNAVAILABLE',
        503,
        1,
        true,
      ]);
      expect(clock.sleeps).toEqual([]);
      expect(transport.sent).toHaveLength(1);
    });

    it('without it, the same call is retried up to maxAttempts within its deadline', async () => {
      const { sut, transport } = setup([status(503)], slowRetries);
      const error = await failure(sut.execute(sign));
      expect([error.code, error.attempts]).toEqual(['UNAVAILABLE', 4]);
      expect(transport.sent).toHaveLength(4);
    });

    it('far enough ahead: retries go on as usual', async () => {
      const { sut, transport } = setup([status(503), ok]);
      expect(await sut.execute({ ...sign, notAfter: performance.now() + 60_000 })).toEqual({
        body: ok.body,
        attempts: 2,
      });
      expect(transport.sent).toHaveLength(2);
    });
  });

  describe('the rate limit counted on the wire (rate-limiter.ts grants)', () => {
    it('an attempt the transport had counts as written; one the open circuit refused gives its grant back', async () => {
      const { sut, clock } = setup([status(503)], {
        breaker: { consecutiveFailures: 1, halfOpenAfterMs: 60_000 },
      });
      // 503 (sent), then the circuit, open after one failure, refuses the retry before the transport.
      const error = await failure(sut.execute(read));
      expect([error.code, error.attempts]).toEqual(['UNAVAILABLE', 2]);
      expect(error.message).toMatch(/circuit open/);
      expect(sut.limiter.pendingGrants).toBe(0);
      expect(clock.sleeps).toEqual([50]);
    });

    it("counts from the transport's write, and a call the full bulkhead refused holds no place", async () => {
      let limiter: RetryLoop['limiter'] | undefined;
      const seen: number[] = [];
      let release: (() => void) | undefined;
      const wire: Transport = {
        send: async (_call, _requestId, _signal, onWritten) => {
          seen.push(limiter?.pendingGrants ?? Number.NaN);
          onWritten?.();
          seen.push(limiter?.pendingGrants ?? Number.NaN);
          await new Promise<void>((resolve) => {
            release = resolve;
          });
          return ok;
        },
      };
      const { sut } = setup([], { concurrency: { maxInFlight: 1, maxQueued: 0 } }, wire);
      limiter = sut.limiter;
      const first = sut.execute(read);
      await waitUntil(() => seen.length === 2, 2_000, 1);
      const refused = await failure(sut.execute(read));
      expect([refused.code, refused.attempts]).toEqual(['UNAVAILABLE', 1]);
      expect(refused.message).toMatch(/in flight and queued/);
      expect(sut.limiter.pendingGrants).toBe(0);
      release?.();
      expect(await first).toEqual({ body: ok.body, attempts: 1 });
      // Pending until the transport said it wrote the request, then counted as written.
      expect(seen).toEqual([1, 0]);
      expect(sut.limiter.pendingGrants).toBe(0);
    });
  });

  it('remembers when the key was last refused (401), for readiness', async () => {
    const { sut, clock } = setup([status(401)]);
    expect(sut.lastUnauthorizedAt).toBeUndefined();
    await failure(sut.execute(read));
    expect(sut.lastUnauthorizedAt).toBe(clock.now());
  });
});
