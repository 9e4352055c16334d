import { afterEach, describe, expect, it, vi } from 'vitest';
import { TransactionsConfig } from '../config/transactions.config';
import { delayFor } from '../transactions/transactions.backoff';
import { listingsRetries, mirrorRefreshWorstCase } from './listings.retries';
import { REFRESH_EVENT_MAX_ATTEMPTS } from './mirror-refresh.handler';
import { ListingsConfig } from '../config/listings.config';

afterEach(() => {
  vi.restoreAllMocks();
});

/** The tracker's waits between the runs of a handler that always fails: delayFor after each run, then a pass. */
function waitsOfFailingRuns(config: TransactionsConfig, runs: number): number {
  let waits = 0;
  for (let run = 1; run < runs; run++) waits += delayFor(config, run) + config.TX_TRACKER_INTERVAL_MS;
  return waits;
}

describe(mirrorRefreshWorstCase.name, () => {
  it('is the ledger backoff at the top of its jitter between its runs', () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.999_999_9);
    const config = new TransactionsConfig();
    const model = mirrorRefreshWorstCase({ transactions: config });

    expect(model.runs.value).toBe(REFRESH_EVENT_MAX_ATTEMPTS);
    expect(waitsOfFailingRuns(config, REFRESH_EVENT_MAX_ATTEMPTS)).toBe(model.waits.value);
  });

  it('bounds the waits at any jitter', () => {
    const config = Object.assign(new TransactionsConfig(), { TX_RESUBMIT_BASE_DELAY_MS: 700 });
    const model = mirrorRefreshWorstCase({ transactions: config });

    for (const random of [0, 0.4, 0.9]) {
      vi.spyOn(Math, 'random').mockReturnValue(random);
      expect(waitsOfFailingRuns(config, REFRESH_EVENT_MAX_ATTEMPTS)).toBeLessThanOrEqual(
        model.waits.value ?? 0,
      );
    }
  });
});

describe(listingsRetries.name, () => {
  it("lists selling's ticket-type cache and the after-final refresh with the ledger", () => {
    const sut = listingsRetries(new ListingsConfig());

    expect(sut.find((s) => s.name === 'TICKET_TYPE_CACHE_MS')?.value).toBe(300_000);
    expect(sut.find((s) => s.name === 'REFRESH_EVENT_MAX_ATTEMPTS')?.module).toBe('transactions');
  });
});
