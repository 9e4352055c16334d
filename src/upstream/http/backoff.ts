/**
 * "Full jitter" exponential backoff (AWS architecture blog): a uniform delay in [0, min(cap, base·2^(n-1))].
 * Spreads retries of many clients instead of synchronising them. `attempt` is the attempt that just failed
 * (1 = the first). `random` returns [0, 1).
 */
export function fullJitterDelay(
  attempt: number,
  baseMs: number,
  capMs: number,
  random: () => number,
): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 30);
  const ceiling = Math.min(capMs, baseMs * 2 ** exponent);
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.min(ceiling, Math.floor(r * ceiling));
}
