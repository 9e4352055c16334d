import { describe, expect, it } from 'vitest';
import { addSpanEvent, nameRequestSpan, traceLogFields, tracingOn, withSpan } from './tracing';

describe(withSpan.name, () => {
  it('while tracing is off runs the work without a span and passes its result and errors through', async () => {
    expect(tracingOn()).toBe(false);
    const seen: unknown[] = [];
    const sut = await withSpan('x', { 'order.id': 'o' }, (span) => {
      seen.push(span);
      return Promise.resolve(7);
    });
    expect(sut).toBe(7);
    expect(seen).toEqual([undefined]);
    await expect(withSpan('x', {}, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
  });

  it('while tracing is off: no log fields, events or span names', () => {
    addSpanEvent('order.step', { step: 'signed' });
    const request = {
      method: 'GET',
      get routeOptions(): { url: string } {
        throw new Error('routeOptions read while tracing is off');
      },
    };
    nameRequestSpan(request);
    expect(traceLogFields()).toEqual({});
  });
});
