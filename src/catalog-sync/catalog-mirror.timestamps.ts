/**
 * The read queries select timestamps as `(column AT TIME ZONE 'UTC')::text` — PostgreSQL's ISO output of
 * the UTC wall time, `YYYY-MM-DD HH:MM:SS[.ffffff]` (trailing zeros of the fraction dropped) — instead of
 * having `pg` parse every column into a `Date` and `to_char` format the sort keys. These turn that text
 * into what the API sends, with string operations only:
 *
 * - `isoOf`: exactly `Date.prototype.toISOString()` of the instant (milliseconds, truncated);
 * - `keyOf`: the exact keyset key `YYYY-MM-DDTHH:MM:SS.ffffffZ` (microseconds, as cursors carry them).
 *
 * Years outside 0001..9999 (5-digit or BC text) take a slower path through `Date`; `pg`'s own timestamp
 * parser assumes the same ISO DateStyle.
 */
const FAST = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,6})?$/;
const GENERAL = /^(\d{4,})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?( BC)?$/;

function fraction(text: string): string {
  return text.length > 20 ? text.slice(20) : '';
}

function viaDate(text: string): Date {
  const m = GENERAL.exec(text);
  if (!m) throw new Error(`unexpected timestamp text from PostgreSQL: ${text.slice(0, 40)}`);
  const [, y = '', mo = '', d = '', h = '', mi = '', s = '', f = '', bc] = m;
  const year = bc ? 1 - Number(y) : Number(y);
  const date = new Date(Date.UTC(2000, Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)));
  date.setUTCFullYear(year);
  date.setUTCMilliseconds(Number(f.padEnd(3, '0').slice(0, 3)));
  return date;
}

/** `(ts AT TIME ZONE 'UTC')::text` → the instant's `toISOString()` (milliseconds). */
export function isoOf(text: string): string {
  if (!FAST.test(text)) return viaDate(text).toISOString();
  return `${text.slice(0, 10)}T${text.slice(11, 19)}.${fraction(text).padEnd(3, '0').slice(0, 3)}Z`;
}

/** Nullable `isoOf`. */
export function isoOrNull(text: string | null): string | null {
  return text === null ? null : isoOf(text);
}

/** `(ts AT TIME ZONE 'UTC')::text` → the exact keyset key, microseconds always written. */
export function keyOf(text: string): string {
  if (!FAST.test(text)) {
    const iso = viaDate(text).toISOString();
    return `${iso.slice(0, -5)}.${fraction(text.replace(/ BC$/, '')).padEnd(6, '0')}Z`;
  }
  return `${text.slice(0, 10)}T${text.slice(11, 19)}.${fraction(text).padEnd(6, '0')}Z`;
}

/** Later of two `isoOf` strings (ISO strings of 4-digit years compare as their instants do). */
export function laterIso(a: string, b: string): string {
  const plain =
    a.charCodeAt(0) !== 43 && a.charCodeAt(0) !== 45 && b.charCodeAt(0) !== 43 && b.charCodeAt(0) !== 45;
  if (plain) return b > a ? b : a;
  return Date.parse(b) > Date.parse(a) ? b : a;
}
