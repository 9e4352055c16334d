import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { I64_MAX, I64_MIN, U64_MAX } from '../../common/int64';
import {
  decodeU64,
  encodeI64,
  encodeU64,
  tryDecodeI64,
  tryDecodeNullableU64,
  tryDecodeU64,
} from './int.codec';
import { UnsafeJsonInteger, parseJsonSafely } from './safe-json';

const SAFE = 9_007_199_254_740_991n;

describe('u64/i64 codecs', () => {
  it('round-trips every u64 through its decimal string', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: U64_MAX }), (value) => {
        const decoded = tryDecodeU64(encodeU64(value));
        expect(decoded).toEqual({ ok: true, value });
      }),
    );
  });

  it('round-trips every i64 through its decimal string', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: I64_MIN, max: I64_MAX }), (value) => {
        expect(tryDecodeI64(encodeI64(value))).toEqual({ ok: true, value });
      }),
    );
  });

  it('round-trips through JSON text: strings at any size, numbers only while safe', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: U64_MAX }), (value) => {
        const asString = parseJsonSafely(`{"v":"${value}"}`) as { v: unknown };
        expect(tryDecodeU64(asString.v)).toEqual({ ok: true, value });
        const asNumber = parseJsonSafely(`{"v":${value}}`) as { v: unknown };
        expect(tryDecodeU64(asNumber.v).ok).toBe(value <= SAFE);
        expect(asNumber.v instanceof UnsafeJsonInteger).toBe(value > SAFE);
      }),
    );
  });

  it.each([
    ['0', 0n],
    ['9007199254740991', 2n ** 53n - 1n],
    ['9007199254740992', 2n ** 53n],
    ['9223372036854775808', 2n ** 63n],
    ['18446744073709551615', U64_MAX],
    // The contract's pattern ^[0-9]+$ admits leading zeros: accepted, normalised on output.
    ['007', 7n],
    ['01', 1n],
    ['00000000000000000000000000000018446744073709551615', U64_MAX],
  ])('accepts the u64 string %s', (text, value) => {
    expect(tryDecodeU64(text)).toEqual({ ok: true, value });
  });

  it.each([
    ['18446744073709551616'],
    ['-1'],
    ['-0'],
    [' 1'],
    ['1 '],
    ['1e3'],
    ['1.5'],
    ['+1'],
    ['0x10'],
    [''],
    ['null'],
    ['１'],
  ])('rejects the u64 string %j', (text) => {
    expect(tryDecodeU64(text).ok).toBe(false);
  });

  it.each([
    [0, true],
    [Number.MAX_SAFE_INTEGER, true],
    [2 ** 53, false],
    [-1, false],
    [-0, false],
    [1.5, false],
    [Number.NaN, false],
    [Number.POSITIVE_INFINITY, false],
  ])('judges the u64 JSON number %d (ok=%s)', (value, ok) => {
    expect(tryDecodeU64(value).ok).toBe(ok);
  });

  it.each([[null], [undefined], [true], [{}], [[]], [1n], [new UnsafeJsonInteger('9007199254740993')]])(
    'rejects the non-number %s',
    (value) => {
      expect(tryDecodeU64(value).ok).toBe(false);
    },
  );

  it('keeps a null or missing identifier as an explicit null, never text', () => {
    expect(tryDecodeNullableU64(null)).toEqual({ ok: true, value: null });
    expect(tryDecodeNullableU64(undefined)).toEqual({ ok: true, value: null });
    expect(tryDecodeNullableU64('null').ok).toBe(false);
  });

  it('accepts the i64 boundaries and rejects one past them', () => {
    expect(tryDecodeI64('-9223372036854775808')).toEqual({ ok: true, value: I64_MIN });
    expect(tryDecodeI64('9223372036854775807')).toEqual({ ok: true, value: I64_MAX });
    expect(tryDecodeI64('-9223372036854775809').ok).toBe(false);
    expect(tryDecodeI64('9223372036854775808').ok).toBe(false);
    expect(tryDecodeI64(-Number.MAX_SAFE_INTEGER)).toEqual({ ok: true, value: -SAFE });
    expect(tryDecodeI64(-(2 ** 53)).ok).toBe(false);
    expect(tryDecodeI64('-0')).toEqual({ ok: true, value: 0n });
    expect(tryDecodeI64('--1').ok).toBe(false);
  });

  it('rejects every string that is not plain digits', () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        fc.pre(!/^[0-9]+$/.test(text));
        expect(tryDecodeU64(text).ok).toBe(false);
      }),
    );
  });

  it('decodeU64 (the hot path of pages) gives the same value or reason as tryDecodeU64 on any input', () => {
    const digits = fc.string({
      unit: fc.integer({ min: 0, max: 9 }).map(String),
      minLength: 0,
      maxLength: 25,
    });
    const near = fc.bigInt({ min: U64_MAX - 1000n, max: U64_MAX + 1000n }).map(String);
    const input = fc.oneof(
      digits,
      near,
      fc.string(),
      fc.integer(),
      fc.double(),
      fc.constantFrom<unknown>(-0, 0, null, undefined, true, {}, [], 1n, new UnsafeJsonInteger('1')),
    );
    fc.assert(
      fc.property(input, (value) => {
        const reference = tryDecodeU64(value);
        expect(decodeU64(value)).toEqual(reference.ok ? reference.value : reference.reason);
      }),
      { numRuns: 2_000 },
    );
  });

  it('decodeU64 equals BigInt(text) on every u64 decimal string, leading zeros and the 15/16-digit edge included', () => {
    const u64 = fc.oneof(
      fc.bigInt({ min: 0n, max: U64_MAX }),
      fc.bigInt({ min: 10n ** 14n, max: 10n ** 16n }),
      fc.bigInt({ min: SAFE - 1000n, max: SAFE + 1000n }),
      fc.constantFrom(0n, 1n, 10n ** 15n - 1n, 10n ** 15n, SAFE, SAFE + 1n, 10n ** 19n - 1n, U64_MAX),
    );
    fc.assert(
      fc.property(u64, fc.nat({ max: 19 }), (value, zeros) => {
        const text = `${'0'.repeat(zeros)}${value}`;
        fc.pre(text.length <= 20);
        expect(decodeU64(text)).toBe(BigInt(text));
      }),
      { numRuns: 3_000 },
    );
    for (const text of ['0', '000', '999999999999999', '1000000000000000', '9007199254740993']) {
      expect(decodeU64(text)).toBe(BigInt(text));
    }
  });

  it('decodeU64 refuses what the digit check refuses at every position and length', () => {
    // One non-digit (the neighbours of '0'..'9' included) anywhere in a string of 1 to 21 characters.
    const bad = fc.constantFrom('/', ':', ' ', '-', '+', '.', 'e', '\u0660', '１', '\u0000');
    fc.assert(
      fc.property(fc.nat({ max: 20 }), fc.nat({ max: 20 }), bad, (length, at, c) => {
        const chars = Array.from({ length: length + 1 }, () => '7');
        chars[Math.min(at, length)] = c;
        const text = chars.join('');
        const reference = tryDecodeU64(text);
        expect(reference.ok).toBe(false);
        expect(decodeU64(text)).toBe(reference.ok ? reference.value : reference.reason);
      }),
      { numRuns: 2_000 },
    );
    expect(typeof decodeU64('18446744073709551616')).toBe('string');
    expect(typeof decodeU64('99999999999999999999')).toBe('string');
    expect(typeof decodeU64('')).toBe('string');
  });

  it('refuses to encode out-of-range values', () => {
    expect(() => encodeU64(-1n)).toThrow(RangeError);
    expect(() => encodeU64(U64_MAX + 1n)).toThrow(RangeError);
    expect(() => encodeI64(I64_MAX + 1n)).toThrow(RangeError);
    expect(() => encodeI64(I64_MIN - 1n)).toThrow(RangeError);
    expect(encodeU64(7n)).toBe('7');
  });
});
