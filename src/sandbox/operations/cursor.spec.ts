import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CursorCodec, type CursorPosition } from './cursor';

const position = fc.record<CursorPosition>({
  resource: fc.constantFrom('events', 'listings'),
  scope: fc.oneof(fc.constant('*'), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String)),
  epoch: fc.nat(),
  from: fc.nat(),
  stall: fc.nat(),
});

describe(CursorCodec.name, () => {
  const sut = new CursorCodec(Buffer.from('secret-one'));

  it('round-trips every position through a URL-safe string', () => {
    fc.assert(
      fc.property(position, (p) => {
        const cursor = sut.encode(p);
        expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
        expect(sut.decode(cursor)).toEqual(p);
      }),
    );
  });

  it('rejects a cursor with any single character changed', () => {
    fc.assert(
      fc.property(position, fc.nat(), fc.constantFrom(...'AZaz09-_.'.split('')), (p, at, ch) => {
        const cursor = sut.encode(p);
        const i = at % cursor.length;
        fc.pre(cursor[i] !== ch);
        const tampered = cursor.slice(0, i) + ch + cursor.slice(i + 1);
        expect(sut.decode(tampered)).toBeUndefined();
      }),
    );
  });

  it('gives each stalled turn at one position its own cursor', () => {
    const at = { resource: 'listings', scope: '*', epoch: 1, from: 5 } as const;
    const cursors = [0, 1, 2].map((stall) => sut.encode({ ...at, stall }));
    expect(new Set(cursors).size).toBe(3);
    expect(cursors.map((c) => sut.decode(c)?.from)).toEqual([5, 5, 5]);
  });

  it('rejects cursors made with another secret, and garbage', () => {
    const other = new CursorCodec(Buffer.from('secret-two'));
    const cursor = other.encode({ resource: 'listings', scope: '*', epoch: 1, from: 5, stall: 0 });
    expect(sut.decode(cursor)).toBeUndefined();
    for (const bad of ['', '.', 'abc', 'a.b.c', 'x'.repeat(600)]) expect(sut.decode(bad)).toBeUndefined();
  });
});
