import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonParseError, UnsafeJsonInteger, parseJsonSafely } from './safe-json';

describe(parseJsonSafely.name, () => {
  it('equals JSON.parse on any JSON without unsafe integers', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        fc.pre(!/(?<![.\d eE+-])-?\d{16,}(?![.\deE])/.test(text));
        expect(parseJsonSafely(text)).toEqual(JSON.parse(text));
      }),
    );
  });

  it('keeps integers beyond 2^53-1 as their exact source text', () => {
    const parsed = parseJsonSafely(
      '{"a":9007199254740993,"b":[-18446744073709551615],"c":9007199254740991}',
    ) as {
      a: unknown;
      b: unknown[];
      c: unknown;
    };
    expect(parsed.a).toEqual(new UnsafeJsonInteger('9007199254740993'));
    expect(parsed.b[0]).toEqual(new UnsafeJsonInteger('-18446744073709551615'));
    expect(parsed.c).toBe(9007199254740991);
    expect(JSON.stringify(parsed)).toBe(
      '{"a":"9007199254740993","b":["-18446744073709551615"],"c":9007199254740991}',
    );
  });

  it('keeps any integer beyond 2^53-1 exact wherever it sits, too long for a double included', () => {
    const unsafe = fc.oneof(
      fc.bigInt({ min: 2n ** 53n, max: 10n ** 400n }),
      fc.bigInt({ min: -(10n ** 400n), max: -(2n ** 53n) }),
    );
    fc.assert(
      fc.property(unsafe, fc.jsonValue(), fc.nat({ max: 300 }), (big, other, depth) => {
        const text = `${'['.repeat(depth)}{"x":${JSON.stringify(other)},"big":${big}}${']'.repeat(depth)}`;
        let parsed = parseJsonSafely(text);
        for (let i = 0; i < depth; i++) parsed = (parsed as unknown[])[0];
        expect((parsed as { big: unknown }).big).toEqual(new UnsafeJsonInteger(String(big)));
      }),
      { numRuns: 200 },
    );
  });

  it('leaves digits inside strings and escaped quotes alone', () => {
    const text = '{"s":"12345678901234567890 \\" 98765432109876543210","n":1.5e300}';
    expect(parseJsonSafely(text)).toEqual(JSON.parse(text));
  });

  it('cannot be fooled by a string that looks like its marker', () => {
    const parsed = parseJsonSafely('{"a":"\\u0000abc:123","b":12345678901234567890}') as { a: unknown };
    expect(parsed.a).toBe('\u0000abc:123');
  });

  it('reports invalid JSON as JsonParseError', () => {
    expect(() => parseJsonSafely('{"items":[{"event_id":"1')).toThrow(JsonParseError);
    expect(() => parseJsonSafely('')).toThrow(JsonParseError);
  });
});
