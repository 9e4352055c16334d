import { I64_MAX, I64_MIN, isI64, isU64, U64_MAX } from '../../common/int64';
import { UnsafeJsonInteger } from './safe-json';

const SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER);

export type IntDecode = { ok: true; value: bigint } | { ok: false; reason: string };

const U64_TEXT = /^[0-9]+$/;
const I64_TEXT = /^-?[0-9]+$/;

const U64_RANGE = `must be within 0..${U64_MAX}`;
/** Decimal strings of up to this many digits are below 10^15 < 2^53: a double holds them exactly. */
const MAX_EXACT_DIGITS = 15;

function fromText(text: string, pattern: RegExp, min: bigint, max: bigint): IntDecode {
  if (!pattern.test(text)) return { ok: false, reason: `decimal string must match ${pattern.source}` };
  // Leading zeros are allowed by the contract's pattern; strip them before the length guard so "007" is 7
  // and a megabyte of digits is refused without building a huge bigint.
  const negative = text.startsWith('-');
  const digits = (negative ? text.slice(1) : text).replace(/^0+(?=\d)/, '');
  if (digits.length > 20) return { ok: false, reason: `must be within ${min}..${max}` };
  const value = BigInt(negative ? `-${digits}` : digits);
  if (value < min || value > max) return { ok: false, reason: `must be within ${min}..${max}` };
  return { ok: true, value };
}

function fromNumber(value: number, min: bigint, max: bigint): IntDecode {
  if (!Number.isSafeInteger(value)) {
    return { ok: false, reason: 'JSON number must be an integer within ±9007199254740991' };
  }
  // -0 is "negative zero" only for u64 (whose JSON range starts at 0); for i64 it is plain 0.
  if (min === 0n && Object.is(value, -0)) return { ok: false, reason: 'must not be negative' };
  const big = BigInt(value);
  if (big < min || big > max || big > SAFE_MAX || big < -SAFE_MAX) {
    return { ok: false, reason: `must be within ${min}..${max}` };
  }
  return { ok: true, value: big };
}

function decode(value: unknown, pattern: RegExp, min: bigint, max: bigint): IntDecode {
  if (typeof value === 'string') return fromText(value, pattern, min, max);
  if (typeof value === 'number') return fromNumber(value, min, max);
  if (value instanceof UnsafeJsonInteger) {
    return { ok: false, reason: 'JSON integer beyond ±9007199254740991 (precision would be lost)' };
  }
  return { ok: false, reason: 'must be a decimal string or a JSON integer' };
}

/**
 * Contract 2.1 u64: a `^[0-9]+$` string within 0..2^64-1 (leading zeros allowed, as the pattern admits),
 * or a JSON integer within 0..2^53-1. JSON numbers are judged by value (JSON does not distinguish `1e3`
 * from `1000`); unsafe JSON integers arrive as UnsafeJsonInteger from safe-json and are refused.
 */
export function tryDecodeU64(value: unknown): IntDecode {
  return decode(value, U64_TEXT, 0n, U64_MAX);
}

/** Contract 2.1 i64: a `^-?[0-9]+$` string within the i64 range, or a JSON integer within ±(2^53-1). */
export function tryDecodeI64(value: unknown): IntDecode {
  return decode(value, I64_TEXT, I64_MIN, I64_MAX);
}

/**
 * tryDecodeU64 for the hot path (every item of every page): the value, or the reason it is refused, with
 * nothing allocated but the bigint. Same rules; plain digit strings of up to 20 characters skip the regex.
 * One pass over the characters checks the digits and, for up to 15 of them, computes the value as a double
 * (exact: below 10^15 < 2^53), so the common short value becomes `BigInt(number)` instead of a second
 * parse of the text by `BigInt(string)`.
 */
export function decodeU64(value: unknown): bigint | string {
  if (typeof value === 'string') {
    const n = value.length;
    if (n > 0 && n <= 20) {
      let small = 0;
      let i = 0;
      for (; i < n; i++) {
        const d = value.charCodeAt(i) - 0x30;
        if (d < 0 || d > 9) break;
        small = small * 10 + d;
      }
      if (i === n) {
        if (n <= MAX_EXACT_DIGITS) return BigInt(small);
        // Fewer than 20 digits are always below 10^19 < 2^64; leading zeros are fine for BigInt ("007" → 7n).
        if (n < 20) return BigInt(value);
        const big = BigInt(value);
        return big <= U64_MAX ? big : U64_RANGE;
      }
    }
  } else if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) {
    return BigInt(value);
  }
  const decoded = tryDecodeU64(value);
  return decoded.ok ? decoded.value : decoded.reason;
}

/** A u64 identifier that may be explicitly absent: null and a missing field both decode to null. */
export function tryDecodeNullableU64(
  value: unknown,
): { ok: true; value: bigint | null } | { ok: false; reason: string } {
  return value === null || value === undefined ? { ok: true, value: null } : tryDecodeU64(value);
}

/** Canonical decimal text of a u64 (no leading zeros); throws RangeError outside 0..2^64-1. */
export function encodeU64(value: bigint): string {
  if (typeof value !== 'bigint' || !isU64(value)) throw new RangeError('u64 value out of range');
  return value.toString();
}

/** Canonical decimal text of an i64; throws RangeError outside the i64 range. */
export function encodeI64(value: bigint): string {
  if (typeof value !== 'bigint' || !isI64(value)) throw new RangeError('i64 value out of range');
  return value.toString();
}
