import fc from 'fast-check';
import { Logger } from '@nestjs/common';
import { describe, expect, it, vi } from 'vitest';
import { AppError } from '../common/app-error';
import { CheckoutConfig } from '../config/checkout.config';
import type { DurableWorkService } from '../durable-work/durable-work.service';
import { UpstreamError } from '../upstream/upstream.error';
import type { CheckoutMetrics } from './checkout.metrics';
import { describeError, OrderCommitter } from './order.committer';
import type { OrderEntity, OrderState } from './order.entity';
import type { OrderPatch, OrderRepository } from './order.repository';

type Call = { method: string; args: unknown[] };

/** A repository double: records calls; `commit` applies the patch to the order as found unless fenced out. */
function setup(options: { fenced?: boolean } = {}) {
  const calls: Call[] = [];
  const observed: OrderEntity[] = [];
  const logs: { level: string; obj: Record<string, unknown>; msg: string }[] = [];
  const repo = {
    commit: (...args: unknown[]) => {
      calls.push({ method: 'commit', args });
      const [, , expected, patch] = args as [string, string, Partial<OrderEntity>, OrderPatch];
      return Promise.resolve(options.fenced ? null : Object.assign(order(expected), patch));
    },
    release: (...args: unknown[]) => {
      calls.push({ method: 'release', args });
      return Promise.resolve();
    },
  } as unknown as OrderRepository;
  const metrics = { observeFinal: (o: OrderEntity) => observed.push(o) } as unknown as CheckoutMetrics;
  const fencedOff: unknown[] = [];
  vi.spyOn(Logger.prototype, 'log').mockImplementation((obj: unknown, msg?: unknown) =>
    logs.push({ level: 'log', obj: obj as Record<string, unknown>, msg: msg as string }),
  );
  vi.spyOn(Logger.prototype, 'warn').mockImplementation((obj: unknown, msg?: unknown) =>
    logs.push({ level: 'warn', obj: obj as Record<string, unknown>, msg: msg as string }),
  );
  const work = {
    instanceId: 'me',
    fencedOff: (...args: unknown[]) => fencedOff.push(args),
  } as unknown as DurableWorkService;
  const config = Object.assign(new CheckoutConfig(), {
    CHECKOUT_RETRY_BASE_DELAY_MS: 100,
    CHECKOUT_RETRY_MAX_DELAY_MS: 1000,
    CHECKOUT_LEASE_MS: 3000,
  });
  const sut = new OrderCommitter(repo, config, metrics, work);
  // The policy's jitter at its top: each delay below is the ceiling the policy draws under.
  sut.random = () => 1;
  return { sut, calls, observed, logs, fencedOff };
}

function order(overrides: Partial<OrderEntity> = {}): OrderEntity {
  return {
    id: 'o-1',
    leaseToken: '7',
    state: 'submitted' as OrderState,
    attempt: 1,
    recoveryPoint: 'track',
    stepFailures: 0,
    requestId: 'r-1',
    failureCode: null,
    ...overrides,
  } as OrderEntity;
}

const upstreamError = (retryAfterMs?: number): UpstreamError =>
  new UpstreamError({
    code: 'RATE_LIMITED',
    operation: 'submitTransaction',
    message: 'slow down',
    status: 429,
    attempts: 1,
    retryAfterMs,
  });

describe(OrderCommitter.name, () => {
  it('backs off exponentially in the order’s failures, capped at the maximum delay', () => {
    const { sut } = setup();
    expect([0, 1, 2, 3, 4, 50].map((n) => sut.backoff(order({ stepFailures: n })))).toEqual([
      100, 200, 400, 800, 1000, 1000,
    ]);
  });

  it('honours a longer Retry-After (upstream ms, or our own seconds), up to four times the maximum', () => {
    const { sut } = setup();
    expect(sut.backoff(order(), upstreamError(2500))).toBe(2500);
    expect(sut.backoff(order(), upstreamError(60_000))).toBe(4000);
    expect(sut.backoff(order(), upstreamError(10))).toBe(100);
    expect(sut.backoff(order(), new AppError('DATABASE_BUSY', 'busy', undefined, 3))).toBe(3000);
    expect(sut.backoff(order({ stepFailures: 3 }), new Error('plain'))).toBe(800);
  });

  it('never waits less after more failures, nor more than four times the maximum whatever is asked', () => {
    const { sut } = setup();
    fc.assert(
      fc.property(fc.nat(40), fc.nat(40), fc.option(fc.nat(10_000_000)), (a, b, asked) => {
        const error = upstreamError(asked ?? undefined);
        const [fewer, more] = [Math.min(a, b), Math.max(a, b)];
        expect(sut.backoff(order({ stepFailures: more }), error)).toBeGreaterThanOrEqual(
          sut.backoff(order({ stepFailures: fewer }), error),
        );
        expect(sut.backoff(order({ stepFailures: more }), error)).toBeLessThanOrEqual(4000);
      }),
    );
  });

  it('draws each delay with full jitter below that ceiling (never above, and not always the same)', () => {
    const { sut } = setup();
    sut.random = Math.random;
    const delays = Array.from({ length: 200 }, () => sut.backoff(order({ stepFailures: 3 })));
    expect(Math.max(...delays)).toBeLessThanOrEqual(800);
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(0);
    expect(new Set(delays).size).toBeGreaterThan(20);
  });

  it('commits fenced by the claim’s token, state and attempt, one log line per audit step', async () => {
    const { sut, calls, logs } = setup();
    const committed = await sut.commit(
      order({ state: 'signing', attempt: 2 }),
      ['signed', 'submitted'],
      { state: 'submitted', recoveryPoint: 'track' },
      null,
      [{ step: 'signed', state: 'signed', recoveryPoint: 'submit' }, { step: 'submitted' }],
    );
    expect(committed?.state).toBe('submitted');
    expect(calls).toHaveLength(1);
    expect(calls[0].args.slice(0, 3)).toEqual([
      'o-1',
      { owner: 'me', token: '7' },
      { state: 'signing', attempt: 2 },
    ]);
    expect(calls[0].args[5]).toBe(3000);
    expect(logs.map((l) => [l.msg, l.obj.step, l.obj.state, l.obj.recoveryPoint])).toEqual([
      ['checkout step', 'signed', 'signed', 'submit'],
      ['checkout step', 'submitted', 'submitted', 'track'],
    ]);
  });

  it('a commit fenced out (lease lost) returns null, warns, counts it as fenced off, and observes nothing', async () => {
    const { sut, observed, logs, fencedOff } = setup({ fenced: true });
    expect(await sut.finish(order(), 'confirmed', null, null)).toBeNull();
    expect(observed).toEqual([]);
    expect(logs.map((l) => [l.level, l.msg])).toEqual([['warn', 'checkout step fenced out (lease lost)']]);
    expect(fencedOff).toEqual([[{ table: 'orders', id: 'o-1', token: '7' }, 'commit']]);
  });

  it('finish: confirmed goes on to the mirror refresh, every other final state is done; observed once', async () => {
    const { sut, calls, observed } = setup();
    await sut.finish(order(), 'confirmed', null, null, { upstreamStatus: 'confirmed' });
    await sut.finish(order(), 'rejected', 'LISTING_GONE', 'gone');
    const patches = calls.map((c) => c.args[3] as OrderPatch);
    expect(patches.map((p) => [p.state, p.recoveryPoint, p.failureCode])).toEqual([
      ['confirmed', 'refresh', null],
      ['rejected', 'done', 'LISTING_GONE'],
    ]);
    expect(observed.map((o) => o.state)).toEqual(['confirmed', 'rejected']);
  });

  it('landed: confirmed completes the order, landed_with_error fails it with the reason', async () => {
    const { sut, calls } = setup();
    await sut.landed(order(), 'confirmed', 'unused');
    await sut.landed(order(), 'landed_with_error', 'slippage');
    const patches = calls.map((c) => c.args[3] as OrderPatch);
    expect(
      patches.map((p) => [p.state, p.recoveryPoint, p.failureCode, p.failureReason, p.upstreamStatus]),
    ).toEqual([
      ['confirmed', 'refresh', null, null, 'confirmed'],
      ['landed_with_error', 'done', 'LANDED_WITH_ERROR', 'slippage', 'landed_with_error'],
    ]);
  });

  it('a commit from a state already final is not observed again', async () => {
    const { sut, observed } = setup();
    await sut.commit(
      order({ state: 'confirmed' }),
      'final',
      { recoveryPoint: 'done' },
      null,
      'mirror_refreshed',
    );
    expect(observed).toEqual([]);
  });

  it("fence: the drive's claim with its lease deadline (held since + lease − a tenth), none without a claim", () => {
    const { sut } = setup();
    expect(sut.fence(order({ heldSince: 10_000 }))).toEqual({
      table: 'orders',
      id: 'o-1',
      token: '7',
      notAfter: 10_000 + 3000 - 300,
    });
    expect(sut.fence(order({ leaseToken: null }))).toBeUndefined();
  });

  it('retryLater hands the order back with the backoff and the error in one line', async () => {
    const { sut, calls } = setup();
    expect(await sut.retryLater(order({ stepFailures: 2 }), upstreamError())).toBeNull();
    expect(calls).toEqual([
      {
        method: 'release',
        args: [
          'o-1',
          { owner: 'me', token: '7' },
          400,
          'RATE_LIMITED: The upstream is rate limiting this service (429)',
        ],
      },
    ]);
  });
});

describe(describeError.name, () => {
  it('says code, status and message, and nothing for a non-error', () => {
    expect(describeError(new AppError('UPSTREAM_REJECTED', 'refused'))).toBe('UPSTREAM_REJECTED: refused');
    expect(describeError(new Error('boom'))).toBe('boom');
    expect(describeError('a string')).toBe('unknown error');
  });

  it("an upstream error: its code and a fixed text with the status, never the upstream's body or message", () => {
    const error = new UpstreamError({
      code: 'FORBIDDEN',
      operation: 'signUserTransaction',
      message: '403: the API key lacks the permission for signUserTransaction',
      status: 403,
      attempts: 1,
      excerpt: '{"error":"forbidden","message":"tenant acme-42 may not sign"}',
    });
    expect(describeError(error)).toBe('FORBIDDEN: The upstream refused the request (403)');
  });
});
