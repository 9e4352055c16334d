/**
 * The contract's 64-bit integer ranges (upstream API 2.1): u64 identifiers and amounts, i64 times.
 * Shared by the upstream codecs and the database column type so both refuse the same values.
 */
export const U64_MAX = 18_446_744_073_709_551_615n;
export const I64_MIN = -9_223_372_036_854_775_808n;
export const I64_MAX = 9_223_372_036_854_775_807n;

export function isU64(value: bigint): boolean {
  return value >= 0n && value <= U64_MAX;
}

export function isI64(value: bigint): boolean {
  return value >= I64_MIN && value <= I64_MAX;
}
