import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRawJson, RawJsonNumber } from '../http/raw-json.parser';
import { I64_MAX, I64_MIN, U64_MAX } from '../../common/int64';
import { parseI64, parseU64, u64Json } from './u64.codec';

const MAX_SAFE = 9007199254740991n;
const fromJson = (text: string): unknown => (parseRawJson(`{"v":${text}}`) as { v: unknown }).v;
const openapi = JSON.parse(
  readFileSync(join(__dirname, '../../../openapi/upstream-api-v0.3.0.openapi.json'), 'utf8'),
) as {
  components: { schemas: Record<string, { oneOf: { pattern?: string }[] }> };
};

describe('parseU64', () => {
  it.each([
    ['"0"', 0n],
    ['0', 0n],
    ['9007199254740991', MAX_SAFE],
    ['"9007199254740992"', MAX_SAFE + 1n],
    ['"9223372036854775808"', 2n ** 63n],
    ['"18446744073709551615"', U64_MAX],
    ['"01"', 1n],
  ])('accepts %s', (text, value) => {
    expect(parseU64(fromJson(text))).toEqual({ ok: true, value });
  });

  it.each([
    '9007199254740992',
    '9223372036854775808',
    '"18446744073709551616"',
    '-1',
    '"-1"',
    '" 1"',
    '"1 "',
    '1e3',
    '1.5',
    '1.0',
    '"1e3"',
    '""',
    '"+1"',
    '-0',
    'true',
    'null',
    '[]',
  ])('rejects %s', (text) => {
    expect(parseU64(fromJson(text)).ok).toBe(false);
  });

  it('accepts exactly the decimal strings within 0..2^64-1', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 65n), max: 2n ** 65n }), (n) => {
        expect(parseU64(n.toString()).ok).toBe(n >= 0n && n <= U64_MAX);
      }),
    );
  });

  it('accepts JSON integers only up to 2^53-1 and never rounds', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n }), (n) => {
        const parsed = parseU64(fromJson(n.toString()));
        expect(parsed.ok ? parsed.value : 'rejected').toBe(n <= MAX_SAFE ? n : 'rejected');
      }),
    );
  });
});

describe('parseI64', () => {
  it('accepts exactly the decimal strings within the i64 range', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }), (n) => {
        expect(parseI64(n.toString()).ok).toBe(n >= I64_MIN && n <= I64_MAX);
      }),
    );
  });

  it.each(['-9007199254740991', '"-9223372036854775808"', '"-0"'])('accepts %s', (text) => {
    expect(parseI64(fromJson(text)).ok).toBe(true);
  });

  it.each(['-9007199254740992', '"9223372036854775808"', '"-9223372036854775809"', '-1.5', '"--1"'])(
    'rejects %s',
    (text) => {
      expect(parseI64(fromJson(text)).ok).toBe(false);
    },
  );

  it('treats a RawJsonNumber as a precision hazard', () => {
    expect(parseI64(new RawJsonNumber('1e2')).ok).toBe(false);
  });
});

describe('OpenAPI U64/I64 patterns', () => {
  const u64 = new RegExp(openapi.components.schemas.U64.oneOf[0].pattern as string);
  const i64 = new RegExp(openapi.components.schemas.I64.oneOf[0].pattern as string);

  it('agree with the codec on every integer near the boundaries', () => {
    const near = fc.oneof(
      fc.bigInt({ min: -(2n ** 65n), max: 2n ** 65n }),
      fc.constantFrom(
        0n,
        MAX_SAFE,
        MAX_SAFE + 1n,
        2n ** 63n,
        U64_MAX,
        U64_MAX + 1n,
        I64_MIN,
        I64_MIN - 1n,
        -1n,
      ),
    );
    fc.assert(
      fc.property(near, fc.nat({ max: 3 }), (n, zeros) => {
        const text = n < 0n ? `-${'0'.repeat(zeros)}${-n}` : `${'0'.repeat(zeros)}${n}`;
        expect(u64.test(text)).toBe(parseU64(text).ok);
        expect(i64.test(text)).toBe(parseI64(text).ok);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('u64Json', () => {
  it('emits strings by default and integers only when safe', () => {
    expect(u64Json(5n, false)).toBe('"5"');
    expect(u64Json(5n, true)).toBe('5');
    expect(u64Json(MAX_SAFE + 1n, true)).toBe('"9007199254740992"');
  });
});
