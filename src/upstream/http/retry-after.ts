const DELAY_SECONDS = /^\s*(\d{1,12})\s*$/;
// RFC 9110 HTTP-date: IMF-fixdate, plus the obsolete RFC 850 and asctime forms recipients must accept.
const IMF_FIXDATE =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;
const RFC850 =
  /^(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), \d{2}-(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)-\d{2} \d{2}:\d{2}:\d{2} GMT$/;
const ASCTIME =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/;

/**
 * `Retry-After` as a delay in milliseconds from `nowMs`: delay-seconds (digits only) or an HTTP-date.
 * A date in the past is 0. Anything else (negative, fractional, garbage, several values) is undefined, and
 * the caller falls back to its own backoff. Date.parse alone is not used as the judge: it accepts "1".
 */
export function parseRetryAfter(
  value: string | readonly string[] | undefined,
  nowMs: number,
): number | undefined {
  if (value === undefined || typeof value !== 'string') return undefined;
  const seconds = DELAY_SECONDS.exec(value);
  if (seconds !== null) return Number(seconds[1]) * 1000;
  const text = value.trim();
  if (!IMF_FIXDATE.test(text) && !RFC850.test(text) && !ASCTIME.test(text)) return undefined;
  const at = Date.parse(ASCTIME.test(text) ? `${text} GMT` : text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
