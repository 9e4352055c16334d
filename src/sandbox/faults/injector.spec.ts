import { describe, expect, it } from 'vitest';
import { FaultInjector } from './injector';
import { parseFaultRules } from './model';

function decisions(seed: string): boolean[] {
  const sut = new FaultInjector('base');
  sut.set([{ operation: 'events', kind: 'error', rate: 0.3 }], seed);
  return Array.from({ length: 200 }, () => sut.plan('events').terminal !== undefined);
}

describe(FaultInjector.name, () => {
  it('fires a one-shot rule exactly N times, for its operation only', () => {
    const sut = new FaultInjector('s');
    sut.add({ operation: 'submit', kind: 'error', times: 2 });
    expect(sut.plan('listings').terminal).toBeUndefined();
    expect(sut.plan('submit').terminal?.kind).toBe('error');
    expect(sut.list()).toEqual([{ operation: 'submit', kind: 'error', times: 1 }]);
    expect(sut.plan('submit').terminal?.kind).toBe('error');
    expect(sut.plan('submit').terminal).toBeUndefined();
    expect(sut.list()).toEqual([]);
  });

  it('lets the first terminal rule win without consuming later ones, and combines modifiers', () => {
    const sut = new FaultInjector('s');
    sut.set([
      { operation: '*', kind: 'latency', latencyMs: 10 },
      { operation: 'listings', kind: 'rate_limit', times: 1 },
      { operation: 'listings', kind: 'error', times: 1 },
      { operation: 'listings', kind: 'null_ids', fraction: 0.5 },
    ]);
    const first = sut.plan('listings');
    expect(first).toMatchObject({ latencyMs: 10, nullIdFraction: 0.5, terminal: { kind: 'rate_limit' } });
    expect(sut.plan('listings').terminal?.kind).toBe('error');
    expect(sut.plan('listings').terminal).toBeUndefined();
  });

  it('reproduces probabilistic decisions from the seed', () => {
    const a = decisions('x');
    expect(decisions('x')).toEqual(a);
    expect(decisions('y')).not.toEqual(a);
    const share = a.filter(Boolean).length / a.length;
    expect(share).toBeGreaterThan(0.15);
    expect(share).toBeLessThan(0.45);
  });
});

describe(parseFaultRules.name, () => {
  it('accepts valid rules and reports every problem of invalid ones', () => {
    expect(parseFaultRules([{ operation: 'listings', kind: 'empty_page', times: 3 }]).ok).toBe(true);
    const bad = parseFaultRules([{ operation: 'x', kind: 'y', rate: 2, colour: 'red' }, 5]);
    expect(bad).toEqual({ ok: false, problems: expect.arrayContaining([expect.any(String)]) });
    expect((bad as { problems: string[] }).problems).toHaveLength(5);
    expect(parseFaultRules({}).ok).toBe(false);
  });
});
