import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  accuracyPercent,
  counterDeltas,
  meanOrNull,
  MINUTE_MS,
  classifySyncFailure,
  ORDERS_RECORDED,
  minuteOf,
  orderFigures,
  minuteSeries,
  percentile,
  perSecond,
  retentionCutoff,
  upstreamDeltas,
} from './status.aggregation';

describe(minuteOf.name, () => {
  it('truncates to the start of its minute, idempotently, never later than the time', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_102_444_800_000 }), (ms) => {
        const sut = minuteOf(ms);
        expect(sut % MINUTE_MS).toBe(0);
        expect(sut).toBeLessThanOrEqual(ms);
        expect(ms - sut).toBeLessThan(MINUTE_MS);
        expect(minuteOf(sut)).toBe(sut);
      }),
    );
  });
});

describe(minuteSeries.name, () => {
  it('has one point per minute of the window, summing the samples of each minute, 0 where none', () => {
    const from = 10 * MINUTE_MS;
    const sut = minuteSeries(
      [
        { minute: from + MINUTE_MS, value: 2 },
        { minute: from + MINUTE_MS, value: 3 },
        { minute: from + 3 * MINUTE_MS, value: 1 },
        { minute: from - MINUTE_MS, value: 99 },
        { minute: from + 9 * MINUTE_MS, value: 99 },
      ],
      from,
      from + 4 * MINUTE_MS,
    );
    expect(sut).toEqual([
      { minute: from, value: 0 },
      { minute: from + MINUTE_MS, value: 5 },
      { minute: from + 2 * MINUTE_MS, value: 0 },
      { minute: from + 3 * MINUTE_MS, value: 1 },
      { minute: from + 4 * MINUTE_MS, value: 0 },
    ]);
  });

  it('keeps the total of the samples inside the window (replicas summed, none lost or counted twice)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ m: fc.integer({ min: -5, max: 65 }), value: fc.integer({ min: 0, max: 1000 }) }),
        ),
        (raw) => {
          const samples = raw.map((s) => ({ minute: s.m * MINUTE_MS, value: s.value }));
          const sut = minuteSeries(samples, 0, 59 * MINUTE_MS);
          expect(sut).toHaveLength(60);
          const inside = samples.filter((s) => s.minute >= 0 && s.minute <= 59 * MINUTE_MS);
          expect(sut.reduce((a, p) => a + (p.value ?? 0), 0)).toBe(inside.reduce((a, s) => a + s.value, 0));
        },
      ),
    );
  });

  it('leaves gaps (null) instead of zeros for a figure that is not a count', () => {
    const sut = minuteSeries([{ minute: MINUTE_MS, value: 7 }], 0, 2 * MINUTE_MS, { fill: null });
    expect(sut.map((p) => p.value)).toEqual([null, 7, null]);
  });
});

describe(percentile.name, () => {
  it('is the nearest-rank percentile: p50 of 1..100 is 50, p99 is 99, p100 the maximum', () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(percentile(values, 50)).toBe(50);
    expect(percentile(values, 99)).toBe(99);
    expect(percentile(values, 100)).toBe(100);
    expect(percentile([], 50)).toBeNull();
  });

  it('is one of the values, at least as many values lie at or below it as p says, and it grows with p', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 1_000_000 }), { minLength: 1, maxLength: 200 }),
        fc.integer({ min: 1, max: 100 }),
        (values, p) => {
          const sut = percentile(values, p) as number;
          expect(values).toContain(sut);
          const atOrBelow = values.filter((v) => v <= sut).length;
          expect(atOrBelow / values.length).toBeGreaterThanOrEqual(p / 100);
          expect(percentile(values, Math.min(100, p + 1))).toBeGreaterThanOrEqual(sut);
        },
      ),
    );
  });
});

describe(perSecond.name, () => {
  it('divides a count by the seconds it took, 0 for no time', () => {
    expect(perSecond(600, 60_000)).toBe(10);
    expect(perSecond(5, 0)).toBe(0);
    expect(perSecond(1, 3_000)).toBeCloseTo(0.333, 3);
  });
});

describe(retentionCutoff.name, () => {
  it('keeps exactly the minutes of the last N hours', () => {
    const now = Date.UTC(2026, 10, 27, 12, 30, 45);
    expect(retentionCutoff(now, 48)).toBe(Date.UTC(2026, 10, 25, 12, 30));
    fc.assert(
      fc.property(
        fc.integer({ min: 2_592_000_000, max: 4_102_444_800_000 }),
        fc.integer({ min: 1, max: 720 }),
        (ms, h) => {
          const sut = retentionCutoff(ms, h);
          expect(sut % MINUTE_MS).toBe(0);
          expect(minuteOf(ms) - sut).toBe(h * 3_600_000);
        },
      ),
    );
  });
});

describe(upstreamDeltas.name, () => {
  it('turns counter totals by operation and status into requests, errors and 429s since the last read', () => {
    const before = new Map([
      ['getPurchaseStatus|200', 10],
      ['getPurchaseStatus|503', 1],
    ]);
    const now = new Map([
      ['getPurchaseStatus|200', 14],
      ['getPurchaseStatus|503', 2],
      ['getPurchaseStatus|429', 3],
      ['submitTransaction|timeout', 1],
    ]);
    expect(upstreamDeltas(before, now)).toEqual([
      { figure: 'upstream.requests', label: 'getPurchaseStatus', value: 8 },
      { figure: 'upstream.errors', label: 'getPurchaseStatus', value: 4 },
      { figure: 'upstream.throttled', label: 'getPurchaseStatus', value: 3 },
      { figure: 'upstream.requests', label: 'submitTransaction', value: 1 },
      { figure: 'upstream.errors', label: 'submitTransaction', value: 1 },
    ]);
    expect(upstreamDeltas(now, now)).toEqual([]);
  });

  it('counts no request and no error for attempts the client never sent (circuit open, overloaded, cancelled)', () => {
    const now = new Map([
      ['getListing|200', 2],
      ['getListing|circuit_open', 5],
      ['getListing|overloaded', 4],
      ['getListing|cancelled', 3],
      ['verifyKey|circuit_open', 7],
    ]);
    expect(upstreamDeltas(new Map(), now)).toEqual([
      { figure: 'upstream.requests', label: 'getListing', value: 2 },
    ]);
  });

  it('treats a counter that went down (registry reset) as counting from zero', () => {
    expect(upstreamDeltas(new Map([['verifyKey|200', 9]]), new Map([['verifyKey|200', 2]]))).toEqual([
      { figure: 'upstream.requests', label: 'verifyKey', value: 2 },
    ]);
  });
});

describe(classifySyncFailure.name, () => {
  it.each([
    [
      'UpstreamError: upstream listActiveListings: 401: the upstream rejected the API key; fix UPSTREAM_API_KEY',
      'auth',
    ],
    ['UpstreamError: upstream listUpcomingEvents: 403: the API key lacks the permission', 'auth'],
    ['UpstreamError: upstream listUpcomingEvents: 404: not found', 'config'],
    ['UpstreamError: upstream listUpcomingEvents: response is not valid JSON', 'config'],
    ['UpstreamError: upstream listUpcomingEvents: HTTP 503', 'upstream_unavailable'],
    ['UpstreamError: upstream listUpcomingEvents: connection failed', 'upstream_unavailable'],
    [
      'UpstreamError: upstream listActiveListings: no answer within 400 ms; outcome unknown',
      'upstream_unavailable',
    ],
    ['UpstreamError: upstream listActiveListings: 429: rate limited by the upstream', 'upstream_unavailable'],
    ['DatabaseConnectionLostError: the database connection was lost', 'database'],
    ['QueryFailedError: canceling statement due to statement timeout', 'database'],
    ['LeaseLostError: lease sync:listings lost', 'database'],
    ['error: terminating connection due to administrator command', 'database'],
    ['TypeError: x is undefined', 'other'],
  ])('%s → %s', (text, kind) => {
    expect(classifySyncFailure('failed', text)).toBe(kind);
  });

  it('names a cancelled pass (shutdown, operator) as such, whatever its text', () => {
    expect(classifySyncFailure('cancelled', 'PassCancelledError: shutting down')).toBe('cancelled');
    expect(classifySyncFailure('failed', null)).toBe('other');
  });
});

describe(orderFigures.name, () => {
  it("counts a minute's finals by outcome and by attempt, with p50/p99 of the time to final and the marker", () => {
    const sut = orderFigures(
      MINUTE_MS,
      [
        { state: 'confirmed', attempt: 1, count: 30_000 },
        { state: 'confirmed', attempt: 2, count: 1 },
        { state: 'rejected', attempt: 1, count: 2 },
      ],
      [100, 300, 200],
    );
    const all = [sut.marker, ...sut.figures];
    const value = (figure: string, label = ''): number | undefined =>
      all.find((f) => f.figure === figure && f.label === label)?.value;
    expect(sut.marker).toEqual({ figure: ORDERS_RECORDED, label: '', minute: MINUTE_MS, value: 30_003 });
    expect(value('orders.final', 'confirmed')).toBe(30_001);
    expect(value('orders.final', 'rejected')).toBe(2);
    expect(value('orders.attempts', '1')).toBe(30_002);
    expect(value('orders.attempts', '2')).toBe(1);
    expect(value('orders.final_p50_ms')).toBe(200);
    expect(value('orders.final_p99_ms')).toBe(300);
    expect(sut.figures.some((f) => f.figure === ORDERS_RECORDED)).toBe(false);
    expect(all.every((f) => f.minute === MINUTE_MS)).toBe(true);
  });

  it('writes only the marker (0) for a minute without finals, so the minute is not computed again', () => {
    expect(orderFigures(0, [], [])).toEqual({
      marker: { figure: ORDERS_RECORDED, label: '', minute: 0, value: 0 },
      figures: [],
    });
  });
});

describe(counterDeltas.name, () => {
  it('adds what each total grew by, nothing for one that did not, from zero for one that went down', () => {
    const before = new Map([
      ['mirror.sampled|', 10],
      ['mirror.stale|', 2],
      ['mirror.staleness_sum|hot', 50],
    ]);
    const now = new Map([
      ['mirror.sampled|', 13],
      ['mirror.stale|', 2],
      ['mirror.staleness_sum|hot', 4],
      ['mirror.staleness_count|cold', 1],
    ]);
    expect(counterDeltas(before, now)).toEqual([
      { figure: 'mirror.sampled', label: '', value: 3 },
      { figure: 'mirror.staleness_sum', label: 'hot', value: 4 },
      { figure: 'mirror.staleness_count', label: 'cold', value: 1 },
    ]);
  });

  it('summed over readings, equals the growth of each total that never went down', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(1000), { minLength: 1, maxLength: 20 }), (steps) => {
        let total = 0;
        let before = new Map<string, number>();
        let sum = 0;
        for (const step of steps) {
          total += step;
          const now = new Map([['f|l', total]]);
          sum += counterDeltas(before, now).reduce((a, d) => a + d.value, 0);
          before = now;
        }
        expect(sum).toBe(total);
      }),
    );
  });
});

describe(accuracyPercent.name, () => {
  it('is the buyable share in percent to one decimal, null without samples, never below 0', () => {
    expect(accuracyPercent(0, 0)).toBeNull();
    expect(accuracyPercent(12, 1)).toBe(91.7);
    expect(accuracyPercent(10, 0)).toBe(100);
    expect(accuracyPercent(3, 5)).toBe(0);
  });
});

describe(meanOrNull.name, () => {
  it('is sum / count to two decimals, null when nothing was counted', () => {
    expect(meanOrNull(10, 3)).toBe(3.33);
    expect(meanOrNull(5, 0)).toBeNull();
  });
});
