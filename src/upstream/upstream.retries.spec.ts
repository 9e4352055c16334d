import { describe, expect, it } from 'vitest';
import { UpstreamConfig } from '../config/upstream.config';
import { UpstreamAttempt, type Answer, type HttpCall, type Transport } from './http/attempt';
import { fullJitterDelay } from './http/backoff';
import type { UpstreamClock } from './http/clock';
import { UpstreamMetrics } from './http/metrics';
import { RetryLoop } from './http/retry-loop';
import { UpstreamError } from './upstream.error';
import { resolveUpstreamOptions, upstreamOptionsFromConfig } from './upstream.options';
import { upstreamBackoffCeiling, upstreamCallWorstCase, type UpstreamCallKind } from './upstream.retries';

/**
 * The worst case docs/RETRIES.md states for one upstream call, checked against the real RetryLoop in virtual
 * time (the call starts at 0): every attempt lasts as long as it may (the fake transport moves the clock) and
 * fails retryably.
 */
function drive(config: UpstreamConfig, kind: UpstreamCallKind, answer: Answer, random = () => 1) {
  let now = 0;
  const clock: UpstreamClock = {
    now: () => now,
    sleep: async (ms) => {
      now += ms;
      await Promise.resolve();
    },
  };
  const attemptMs = upstreamCallWorstCase(config, kind).attemptTimeoutMs;
  const options = resolveUpstreamOptions(
    upstreamOptionsFromConfig(
      config,
      { baseUrl: 'http://127.0.0.1:1', apiKey: 'test-key' },
      { clock, random, logger: { info: () => undefined, warn: () => undefined } },
    ),
  );
  let sent = 0;
  const transport: Transport = {
    send: async () => {
      sent++;
      // An attempt is cut at min(its timeout, the time left before the call's deadline) (http/attempt.ts).
      now += Math.max(1, Math.min(attemptMs, config.UPSTREAM_DEADLINE_MS - now));
      return answer;
    },
  };
  const metrics = new UpstreamMetrics();
  const sut = new RetryLoop(options, new UpstreamAttempt(options, transport, metrics), metrics);
  const call: HttpCall = { operation: 'getProtocolConfig', kind, method: 'GET', route: '/p', path: '/p' };
  return sut.execute(call).then(
    () => ({ elapsed: now, sent, error: undefined }),
    (error: unknown) => ({ elapsed: now, sent, error }),
  );
}

function upstreamConfig(values: Partial<UpstreamConfig>): UpstreamConfig {
  return Object.assign(new UpstreamConfig(), values);
}

describe(upstreamCallWorstCase.name, () => {
  it.each(['read', 'sign', 'submit'] as const)(
    'is reached by a %s call whose every attempt times out into a 503 at the backoff ceiling',
    async (kind) => {
      const roomy = upstreamConfig({ UPSTREAM_DEADLINE_MS: 600_000, UPSTREAM_RETRY_AFTER_CAP_MS: 0 });
      const model = upstreamCallWorstCase(roomy, kind);

      const sut = await drive(roomy, kind, { status: 503, body: '' });

      expect(sut.error).toBeInstanceOf(UpstreamError);
      expect(sut.sent).toBe(model.attempts);
      expect(sut.elapsed).toBe(model.time.value);
    },
  );

  it('is reached with every wait a Retry-After at the cap', async () => {
    const roomy = upstreamConfig({ UPSTREAM_DEADLINE_MS: 600_000, UPSTREAM_RETRY_AFTER_CAP_MS: 20_000 });
    const model = upstreamCallWorstCase(roomy, 'read');

    const sut = await drive(roomy, 'read', { status: 429, body: '', retryAfter: '20' });

    expect(sut.sent).toBe(model.attempts);
    expect(sut.elapsed).toBe(model.time.value);
  });

  it('is never exceeded with the defaults, the deadline cutting the call', async () => {
    const defaults = new UpstreamConfig();
    const model = upstreamCallWorstCase(defaults, 'submit');

    for (const answer of [
      { status: 503, body: '' },
      { status: 429, body: '', retryAfter: String(defaults.UPSTREAM_RETRY_AFTER_CAP_MS / 1000) },
    ]) {
      const sut = await drive(defaults, 'submit', answer);

      expect(sut.sent).toBeLessThanOrEqual(model.attempts);
      expect(sut.elapsed).toBeLessThanOrEqual(model.time.value ?? 0);
    }
    expect(model.time.value).toBe(defaults.UPSTREAM_DEADLINE_MS);
  });
});

describe(upstreamBackoffCeiling.name, () => {
  it('is the largest delay the client draws before each retry', () => {
    const defaults = new UpstreamConfig();
    const { UPSTREAM_BACKOFF_BASE_MS: base, UPSTREAM_BACKOFF_MAX_MS: max } = defaults;

    for (let attempt = 1; attempt <= defaults.UPSTREAM_MAX_ATTEMPTS; attempt++) {
      const draws = [0, 0.25, 0.5, 0.999_999, 1].map((r) => fullJitterDelay(attempt, base, max, () => r));

      expect(Math.max(...draws)).toBe(upstreamBackoffCeiling(defaults, attempt));
    }
  });
});
