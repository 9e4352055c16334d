import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSafeSubject, SUBJECT_CHARSET } from './subject';

describe('isSafeSubject', () => {
  it.each(['alice', 'user-1', 'a.b_c:d@e-f', 'A9', 'x'.repeat(128)])('accepts %s', (subject) => {
    expect(isSafeSubject(subject)).toBe(true);
  });

  it.each([
    ['a path traversal', 'alice/../bob'],
    ['a slash', 'alice/bob'],
    ['a percent escape', 'alice%2Fbob'],
    ['a dot segment', '..'],
    ['one dot', '.'],
    ['two dots inside', 'alice..bob'],
    ['a space', 'a b'],
    ['non-ASCII', 'é'],
    ['NUL', 'a\u0000'],
    ['empty', ''],
    ['too long', 'x'.repeat(129)],
    ['a query', 'a?b'],
    ['a fragment', 'a#b'],
    ['a backslash', 'a\\b'],
  ])('refuses %s', (_name, subject) => {
    expect(isSafeSubject(subject)).toBe(false);
  });

  it('refuses non-strings', () => {
    for (const value of [undefined, null, 1, ['a'], { a: 1 }]) expect(isSafeSubject(value)).toBe(false);
  });

  it('a safe subject is one path segment however an upstream decodes or normalises it (fast-check)', () => {
    let safe = 0;
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9._:@%/?#\\ -]{0,12}$/), (candidate) => {
        if (!isSafeSubject(candidate)) return;
        safe++;
        expect(SUBJECT_CHARSET.test(candidate)).toBe(true);
        expect(/[/%?#\\]/.test(candidate)).toBe(false);
        const decoded = decodeURIComponent(encodeURIComponent(candidate));
        expect(decoded.split('/')).toEqual([candidate]);
        expect(['.', '..']).not.toContain(decoded);
      }),
      { numRuns: 500, seed: 31 },
    );
    expect(safe).toBeGreaterThan(20);
  });
});
