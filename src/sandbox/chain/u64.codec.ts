import { RawJsonNumber } from '../http/raw-json.parser';

import { I64_MAX, I64_MIN, U64_MAX } from '../../common/int64';

export type IntegerParse = { ok: true; value: bigint } | { ok: false; reason: string };

const U64_TEXT = /^[0-9]+$/;
const I64_TEXT = /^-?[0-9]+$/;

function fromNumber(value: number | RawJsonNumber, min: bigint, max: bigint): IntegerParse {
  // A RawJsonNumber is a JSON number token that could not be taken as a safe integer: a fraction, exponent
  // notation or a magnitude past 2^53-1, where JSON.parse would silently lose precision.
  if (value instanceof RawJsonNumber || !Number.isSafeInteger(value)) {
    return {
      ok: false,
      reason: 'JSON number must be an integer within ±9007199254740991; send a decimal string',
    };
  }
  if (min === 0n && Object.is(value, -0)) return { ok: false, reason: 'must not be negative' };
  const big = BigInt(value);
  if (big < min || big > max) return { ok: false, reason: `must be within ${min}..${max}` };
  return { ok: true, value: big };
}

function fromText(text: string, pattern: RegExp, min: bigint, max: bigint): IntegerParse {
  if (!pattern.test(text)) return { ok: false, reason: `decimal string must match ${pattern.source}` };
  const big = BigInt(text);
  if (big < min || big > max) return { ok: false, reason: `must be within ${min}..${max}` };
  return { ok: true, value: big };
}

/**
 * A u64 value as the contract defines it: a `^[0-9]+$` string within 0..2^64-1, or a JSON integer within
 * 0..2^53-1. Leading zeros are accepted because the contract's pattern admits them ("007" is 7).
 */
export function parseU64(value: unknown): IntegerParse {
  if (typeof value === 'string') return fromText(value, U64_TEXT, 0n, U64_MAX);
  if (typeof value === 'number' || value instanceof RawJsonNumber) return fromNumber(value, 0n, U64_MAX);
  return { ok: false, reason: 'must be a decimal string or a JSON integer' };
}

/** An i64 value: a `^-?[0-9]+$` string within the i64 range, or a JSON integer within ±(2^53-1). */
export function parseI64(value: unknown): IntegerParse {
  if (typeof value === 'string') return fromText(value, I64_TEXT, I64_MIN, I64_MAX);
  if (typeof value === 'number' || value instanceof RawJsonNumber) return fromNumber(value, I64_MIN, I64_MAX);
  return { ok: false, reason: 'must be a decimal string or a JSON integer' };
}

/** JSON text for a u64 the sandbox emits: a decimal string, or a bare integer when the fault asks for it. */
export function u64Json(value: bigint, asNumber: boolean): string {
  const text = value.toString();
  return asNumber && value <= 9007199254740991n && value >= -9007199254740991n ? text : `"${text}"`;
}
