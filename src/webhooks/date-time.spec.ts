import { describe, expect, it } from 'vitest';
import { dateTimeExists } from './date-time';

describe(dateTimeExists.name, () => {
  it.each([
    '2026-11-28T03:20:00Z',
    '2026-11-28T03:20:00.123456Z',
    '2026-11-28t03:20:00z',
    '2028-02-29T00:00:00+01:00',
    '2026-12-31T23:59:59-05:30',
  ])('accepts %s', (text) => {
    expect(dateTimeExists(text)).toBe(true);
  });

  it.each(['2026-02-29T00:00:00Z', '2026-02-30T00:00:00Z', '2026-04-31T00:00:00Z', '2026-06-30T23:59:60Z'])(
    'refuses %s (no such instant)',
    (text) => {
      expect(dateTimeExists(text)).toBe(false);
    },
  );
});
