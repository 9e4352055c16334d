import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { U64_MAX, isU64, u64Transformer } from './u64';

describe('u64Transformer', () => {
  it('round-trips every u64 through its decimal string', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: U64_MAX }), (value) => {
        const stored = u64Transformer.to(value) as string;
        expect(stored).toMatch(/^(0|[1-9][0-9]*)$/);
        expect(u64Transformer.from(stored)).toBe(value);
      }),
    );
  });

  it('keeps null and undefined explicit', () => {
    expect(u64Transformer.to(null)).toBeNull();
    expect(u64Transformer.to(undefined)).toBeUndefined();
    expect(u64Transformer.from(null)).toBeNull();
  });

  it('rejects values outside 0..2^64-1 and non-bigints', () => {
    fc.assert(
      fc.property(fc.oneof(fc.bigInt({ max: -1n }), fc.bigInt({ min: U64_MAX + 1n })), (value) => {
        expect(isU64(value)).toBe(false);
        expect(() => u64Transformer.to(value)).toThrow(RangeError);
      }),
    );
    expect(() => u64Transformer.to(5)).toThrow(RangeError);
  });
});
