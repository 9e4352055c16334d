import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bindingAllows,
  bindingProblem,
  describeBinding,
  isSubjectPattern,
  patternMatches,
  ANY_SUBJECT,
  storedBinding,
  UNBOUND_WRITE_KEY_MESSAGE,
  type SubjectBinding,
} from './subject-binding';

/** Subjects as the routes take them: 1..255 characters, without `*` so they can be exact patterns. */
const subject = fc
  .string({ minLength: 1, maxLength: 40 })
  .filter((s) => !s.includes('*') && !/\p{Cc}/u.test(s));

describe('subject binding', () => {
  it.each(['alice', 'acme-*', '*', 'a.b_c:d@e-f', 'x'.repeat(128), `${'x'.repeat(128)}*`])(
    'accepts the pattern %s',
    (pattern) => {
      expect(isSubjectPattern(pattern)).toBe(true);
    },
  );

  it.each([
    '',
    '**',
    'a*b',
    '*a',
    'a**',
    'a\u0000',
    'tab\there',
    'a b',
    'é😀',
    'alice/',
    'alice/*',
    'a%2F*',
    '..',
    'a..*',
    'x'.repeat(129),
    `${'x'.repeat(129)}*`,
  ])('refuses the pattern %j', (pattern) => {
    expect(isSubjectPattern(pattern)).toBe(false);
  });

  it('an exact pattern matches only itself; a prefix pattern exactly the subjects that start with it (fast-check)', () => {
    fc.assert(
      fc.property(subject, subject, (pattern, candidate) => {
        expect(patternMatches(pattern, candidate)).toBe(candidate === pattern);
        expect(patternMatches(`${pattern}*`, candidate)).toBe(candidate.startsWith(pattern));
        expect(patternMatches(`${pattern}*`, pattern + candidate)).toBe(true);
        expect(patternMatches('*', candidate)).toBe(true);
      }),
      { numRuns: 500, seed: 23 },
    );
  });

  it('user and integrator patterns are separate; unbound allows every subject', () => {
    const binding: SubjectBinding = { userSubjects: ['acme-*'], integratorSubjects: ['acme'] };
    expect(bindingAllows(binding, 'user', 'acme-1')).toBe(true);
    expect(bindingAllows(binding, 'user', 'acme')).toBe(false);
    expect(bindingAllows(binding, 'integrator', 'acme')).toBe(true);
    expect(bindingAllows(binding, 'integrator', 'acme-1')).toBe(false);
    expect(bindingAllows({ userSubjects: [], integratorSubjects: [] }, 'user', 'anyone')).toBe(false);
    fc.assert(
      fc.property(subject, fc.constantFrom('user' as const, 'integrator' as const), (s, wallet) => {
        expect(bindingAllows(null, wallet, s)).toBe(true);
      }),
      { numRuns: 100, seed: 23 },
    );
  });

  it('a binding is refused on an admin key and with a malformed or oversized list', () => {
    const ok: SubjectBinding = { userSubjects: ['a-*'], integratorSubjects: [] };
    expect(bindingProblem(['orders:write'], ok)).toBeUndefined();
    expect(bindingProblem(['admin'], null)).toBeUndefined();
    expect(bindingProblem(['admin'], ok)).toContain('admin');
    expect(bindingProblem(['orders:write'], { userSubjects: ['a*b'], integratorSubjects: [] })).toBeDefined();
    expect(
      bindingProblem(['orders:write'], {
        userSubjects: [],
        integratorSubjects: Array<string>(101).fill('x'),
      }),
    ).toContain('100');
  });

  it('refuses a non-admin key with a subject scope and neither a binding nor the any-subject opt-in (issue 31 item 3)', () => {
    for (const scope of ['listings:write', 'orders:write', 'transactions:write'] as const) {
      expect(bindingProblem([scope], null)).toBe(UNBOUND_WRITE_KEY_MESSAGE);
      expect(bindingProblem(['catalog:read', scope], null)).toBe(UNBOUND_WRITE_KEY_MESSAGE);
      expect(bindingProblem([scope], ANY_SUBJECT)).toBeUndefined();
    }
    // Keys whose routes act for no subject need neither; an admin key is never bound.
    expect(bindingProblem(['catalog:read'], null)).toBeUndefined();
    expect(bindingProblem(['webhooks:write'], null)).toBeUndefined();
    expect(bindingProblem(['admin', 'orders:write'], null)).toBeUndefined();
    expect(storedBinding(ANY_SUBJECT)).toBeNull();
  });

  it('describes a binding in one line for the key list', () => {
    expect(describeBinding(null)).toBe('any subject');
    expect(describeBinding({ userSubjects: ['a-*', 'b'], integratorSubjects: [] })).toBe(
      'users: a-*, b; integrators: (none)',
    );
  });
});
