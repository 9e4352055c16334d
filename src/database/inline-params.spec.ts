import { describe, expect, it } from 'vitest';
import { inlineParams } from './inline-params';

describe(inlineParams.name, () => {
  it('writes numbers, quoted strings and null in place of $n ($10 is not $1 followed by 0)', () => {
    const params = ["o'wner", 30_000, 16, null, 5, 6, 7, 8, 9, 'ten'];
    const sut = inlineParams('a = $1, b = $2::float8, c = $3, d = $4, e = $10', params);
    expect(sut).toBe("a = 'o''wner', b = 30000::float8, c = 16, d = NULL, e = 'ten'");
  });

  it('refuses a parameter it does not have, a non-finite number or another type', () => {
    expect(() => inlineParams('$2', [1])).toThrow(/\$2/);
    expect(() => inlineParams('$1', [Number.NaN])).toThrow(/finite/);
    expect(() => inlineParams('$1', [{}])).toThrow(/type object/);
  });
});
