import { trace, type Span, type Tracer, type TracerProvider } from '@opentelemetry/api';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  FLUSH_MARGIN_MS,
  FLUSH_MAX_MS,
  addSpanEvent,
  flushTracingWithin,
  nameRequestSpan,
  setTracingState,
  traceLogFields,
  tracingOn,
  withSpan,
} from './tracing';

/** A tracer provider registered with the API whose tracer records every span it is asked for. */
function spyTracerProvider() {
  const startActiveSpan = vi.fn<(name: string) => unknown>();
  const startSpan = vi.fn<Tracer['startSpan']>();
  const tracer = { startActiveSpan, startSpan } as unknown as Tracer;
  const provider: TracerProvider = { getTracer: () => tracer };
  trace.setGlobalTracerProvider(provider);
  return { startActiveSpan, startSpan };
}

/** An active span as the API would hand it out; the calls that would record something are spies. */
function fakeSpan() {
  const calls = {
    addEvent: vi.fn<Span['addEvent']>(),
    updateName: vi.fn<Span['updateName']>(),
    setAttribute: vi.fn<Span['setAttribute']>(),
  };
  const span = {
    ...calls,
    spanContext: () => ({ traceId: '1'.repeat(32), spanId: '2'.repeat(16), traceFlags: 1 }),
  } as unknown as Span;
  return { span, calls };
}

const hanging = (): Promise<void> => new Promise<void>(() => undefined);

/** Tracing "on" with `flush` as the SDK's, and the warnings the bounded flush gives. */
function flushSetup(flush: () => Promise<void>) {
  setTracingState({ flush });
  const warnings: { fields: Record<string, unknown>; message: string }[] = [];
  const warn = (fields: Record<string, unknown>, message: string): void =>
    void warnings.push({ fields, message });
  return { warnings, warn };
}

const GAVE_UP = 'tracing flush gave up at shutdown: the spans still queued are lost';

afterEach(() => {
  vi.restoreAllMocks();
  trace.disable();
  setTracingState(undefined);
});

describe(withSpan.name, () => {
  it('while tracing is off runs the work without a span and passes its result and errors through', async () => {
    expect(tracingOn()).toBe(false);
    const tracer = spyTracerProvider();
    const seen: unknown[] = [];
    const sut = await withSpan('x', { 'order.id': 'o' }, (span) => {
      seen.push(span);
      return Promise.resolve(7);
    });
    expect(sut).toBe(7);
    expect(seen).toEqual([undefined]);
    await expect(withSpan('x', {}, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    // The off-switch, not the API's no-op tracer: the tracer is never asked for a span.
    expect(tracer.startActiveSpan).not.toHaveBeenCalled();
    expect(tracer.startSpan).not.toHaveBeenCalled();
  });

  it('while tracing is off: no events and no span names, the active span is never even looked up', () => {
    const { span, calls } = fakeSpan();
    const getActiveSpan = vi.spyOn(trace, 'getActiveSpan').mockReturnValue(span);
    addSpanEvent('order.step', { step: 'signed' });
    const request = {
      method: 'GET',
      get routeOptions(): { url: string } {
        throw new Error('routeOptions read while tracing is off');
      },
    };
    nameRequestSpan(request);
    expect(getActiveSpan).not.toHaveBeenCalled();
    expect(Object.values(calls).map((f) => f.mock.calls.length)).toEqual([0, 0, 0]);
  });

  it('while tracing is off: no log fields', () => {
    expect(traceLogFields()).toEqual({});
  });
});

describe(flushTracingWithin.name, () => {
  it('with tracing off flushes nothing and warns of nothing', async () => {
    const warnings: string[] = [];
    expect(await flushTracingWithin(5_000, (_f, m) => void warnings.push(m))).toBe('off');
    expect(warnings).toEqual([]);
  });

  it('answers once the spans are exported', async () => {
    const { warn, warnings } = flushSetup(() => Promise.resolve());
    expect(await flushTracingWithin(5_000, warn)).toBe('flushed');
    expect(warnings).toEqual([]);
  });

  it('a failed export is a warning without the error text', async () => {
    const { warn, warnings } = flushSetup(() =>
      Promise.reject(new Error('connect ECONNREFUSED http://collector')),
    );
    expect(await flushTracingWithin(5_000, warn)).toBe('failed');
    expect(warnings).toHaveLength(1);
    expect(JSON.stringify(warnings)).not.toContain('collector');
  });

  it.each([
    ['plenty of budget left: FLUSH_MAX_MS', 60_000, FLUSH_MAX_MS],
    ['little left: the rest minus the margin', 1_000, 1_000 - FLUSH_MARGIN_MS],
  ])('gives up on a collector out of reach (%s) and says so', async (_case, remainingMs, expectedWaitMs) => {
    vi.useFakeTimers();
    try {
      const { warn, warnings } = flushSetup(hanging);
      let outcome: string | undefined;
      const sut = flushTracingWithin(remainingMs, warn).then((o) => (outcome = o));
      await vi.advanceTimersByTimeAsync(expectedWaitMs - 1);
      const early = outcome;
      await vi.advanceTimersByTimeAsync(1);
      await sut;
      expect([early, outcome]).toEqual([undefined, 'gave_up']);
      expect(warnings).toEqual([{ fields: { waitedMs: expectedWaitMs }, message: GAVE_UP }]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('with less than the margin left gives up at once', async () => {
    vi.useFakeTimers();
    try {
      const { warn, warnings } = flushSetup(hanging);
      const sut = flushTracingWithin(FLUSH_MARGIN_MS - 50, warn);
      await vi.advanceTimersByTimeAsync(0);
      expect(await sut).toBe('gave_up');
      expect(warnings).toEqual([{ fields: { waitedMs: 0 }, message: GAVE_UP }]);
    } finally {
      vi.useRealTimers();
    }
  });
});
