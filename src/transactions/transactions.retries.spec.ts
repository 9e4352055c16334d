import { afterEach, describe, expect, it, vi } from 'vitest';
import { TransactionsConfig } from '../config/transactions.config';
import { UpstreamConfig } from '../config/upstream.config';
import { UpstreamError } from '../upstream/upstream.error';
import { delayFor } from './transactions.backoff';
import { ledgerWorstCase } from './transactions.retries';

afterEach(() => {
  vi.restoreAllMocks();
});

const defaults = () => ({ transactions: new TransactionsConfig(), upstream: new UpstreamConfig() });

describe(ledgerWorstCase.name, () => {
  it("uses the tracker's real largest delay between two looks at a row", () => {
    const config = defaults();
    const sut = ledgerWorstCase(config);
    vi.spyOn(Math, 'random').mockReturnValue(0.999_999_9);

    const drawn = Array.from({ length: 40 }, (_, i) => delayFor(config.transactions, i + 1));

    expect(Math.max(...drawn)).toBe(sut.signing.delayCeilingMs);
    expect(Math.max(...drawn)).toBe(sut.afterFinal.delayCeilingMs);
  });

  it("adds to the give-up time what the tracker's real delay adds when the upstream asks for more", () => {
    const config = defaults();
    const sut = ledgerWorstCase(config);
    const asked = new UpstreamError({
      code: 'RATE_LIMITED',
      operation: 'submitTransaction',
      message: 'slow down',
      attempts: 1,
      retryAfterMs: 24 * 3_600_000,
    });
    vi.spyOn(Math, 'random').mockReturnValue(0);

    const longest = delayFor(config.transactions, 40, asked);

    expect((sut.submissions.timeWithRetryAfter.value ?? 0) - (sut.submissions.time.value ?? 0)).toBe(
      longest - sut.signing.delayCeilingMs,
    );
  });

  it('makes a signing repeat per tracker pass within the window (every delay drawn 0)', () => {
    const config = defaults();
    const sut = ledgerWorstCase(config);
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const { TX_SIGN_RESOLVE_WINDOW_MS: window, TX_TRACKER_INTERVAL_MS: interval } = config.transactions;

    let repeats = 0;
    for (let at = 0, attempt = 1; at <= window; attempt++) {
      repeats++;
      at += delayFor(config.transactions, attempt) + interval;
    }

    expect(repeats).toBe(sut.signing.calls.value);
  });
});
