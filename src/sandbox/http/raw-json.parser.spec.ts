import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonSyntaxError, parseRawJson, RawJsonNumber } from './raw-json.parser';

/** Plain-object copy, so null-prototype results compare equal to JSON.parse output. */
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown;

describe(parseRawJson.name, () => {
  it('agrees with JSON.parse on JSON without unsafe numbers', () => {
    const safe = fc.jsonValue().filter((v) => !JSON.stringify(v).match(/[0-9][.eE]|[0-9]{16,}/));
    fc.assert(
      fc.property(safe, (value) => {
        const text = JSON.stringify(value);
        expect(plain(parseRawJson(text))).toEqual(JSON.parse(text));
      }),
    );
  });

  it('keeps fractions, exponents and unsafe integers as raw text', () => {
    const parsed = parseRawJson(
      '[1.5, 1e3, 9007199254740992, -9007199254740992, 9007199254740991]',
    ) as unknown[];
    expect(parsed.slice(0, 4)).toEqual(
      ['1.5', '1e3', '9007199254740992', '-9007199254740992'].map((t) => new RawJsonNumber(t)),
    );
    expect(parsed[4]).toBe(9007199254740991);
  });

  it.each(['', '{', '{"a":1,"a":2}', '01', '[1,]', '{"a":1}x', '"\u0001"', 'NaN', '+1', '.5', '1.', '[1 2]'])(
    'rejects %j',
    (text) => {
      expect(() => parseRawJson(text)).toThrow(JsonSyntaxError);
    },
  );

  it('does not let __proto__ change the prototype', () => {
    const parsed = parseRawJson('{"__proto__":{"polluted":true}}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(parsed)).toBeNull();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(parsed.__proto__).toEqual(expect.objectContaining({ polluted: true }));
  });

  it('decodes escapes exactly', () => {
    expect(parseRawJson('"a\\"b\\u00e9\\n"')).toBe('a"bé\n');
  });

  it('refuses absurd nesting', () => {
    expect(() => parseRawJson('['.repeat(100) + ']'.repeat(100))).toThrow(JsonSyntaxError);
  });
});
