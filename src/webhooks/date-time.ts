/**
 * Whether RFC 3339 text (its form checked by the DTO's IsRFC3339) names a real instant that PostgreSQL reads as
 * JavaScript does: JavaScript reads 02-30 as 03-02 where PostgreSQL refuses it, and a leap second (:60) is not read
 * at all. Refusing these up front makes them a 400, never a 500 from the query.
 */
export function dateTimeExists(text: string): boolean {
  if (Number.isNaN(Date.parse(text))) return false;
  const [y, m, d] = text.slice(0, 10).split('-').map(Number);
  return new Date(Date.UTC(y, m - 1, d)).getUTCDate() === d;
}
