import { ValidateBy, type ValidationOptions } from 'class-validator';

// RFC 3339 date-time (section 5.6): full-date "T" full-time with a required offset; seconds fraction optional.
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|([+-])(\d{2}):(\d{2}))$/;

/**
 * The instant an RFC 3339 date-time denotes, as an ISO string (UTC, milliseconds), or undefined when the
 * text is not one: wrong shape, impossible calendar date (2027-02-30), hour > 23, offsets past ±23:59,
 * leap seconds (no instant a JavaScript Date or PostgreSQL can hold), years before 0001.
 */
export function parseRfc3339(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const m = RFC3339.exec(value);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const offsetHours = m[10] ? Number(m[10]) : 0;
  const offsetMinutes = m[11] ? Number(m[11]) : 0;
  if (year < 1 || month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return undefined;
  if (offsetHours > 23 || offsetMinutes > 59) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined;
  const fraction = m[7] ? Number(`0${m[7]}`) : 0;
  const sign = m[9] === '-' ? -1 : 1;
  const instant =
    date.getTime() +
    ((hour * 60 + minute - sign * (offsetHours * 60 + offsetMinutes)) * 60 + second) * 1000 +
    Math.floor(fraction * 1000);
  const iso = new Date(instant).toISOString();
  // Offsets can push 0001/9999 across the range PostgreSQL and ISO 8601 basic years share.
  return /^\d{4}-/.test(iso) && !iso.startsWith('0000') ? iso : undefined;
}

/** An RFC 3339 date-time with an offset (e.g. `2027-01-01T20:00:00Z`), a real calendar instant. */
export function IsRfc3339Instant(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isRfc3339Instant',
      validator: {
        validate: (value: unknown) => parseRfc3339(value) !== undefined,
        defaultMessage: (args) =>
          `${args?.property ?? 'value'} must be an RFC 3339 date-time with an offset, e.g. 2027-01-01T20:00:00Z`,
      },
    },
    options,
  );
}
