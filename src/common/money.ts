/** Largest number of decimals formatMinor accepts (covers every token the contract can describe). */
export const MONEY_MAX_DECIMALS = 18;

/**
 * Exact decimal text of an amount in minor units: `formatMinor(1_500_000n, 6)` → `"1.5"`.
 * String arithmetic only (no floating point). Trailing fractional zeros are trimmed, and a whole
 * amount has no fractional part at all (`1_000_000n, 6` → `"1"`, `0n, 6` → `"0"`), so equal
 * amounts always read the same. Negative amounts get a leading `-` (u64 amounts never are).
 */
export function formatMinor(raw: bigint, decimals: number): string {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > MONEY_MAX_DECIMALS)
    throw new RangeError(`decimals must be an integer from 0 to ${MONEY_MAX_DECIMALS}`);
  const sign = raw < 0n ? '-' : '';
  const digits = (raw < 0n ? -raw : raw).toString();
  if (decimals === 0) return sign + digits;
  const padded = digits.padStart(decimals + 1, '0');
  const whole = padded.slice(0, -decimals);
  const fraction = padded.slice(-decimals).replace(/0+$/, '');
  return sign + (fraction ? `${whole}.${fraction}` : whole);
}
