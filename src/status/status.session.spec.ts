import { describe, expect, it } from 'vitest';
import { STATUS_COOKIE, cookieValue, sessionCookie, signSession, verifySession } from './status.session';

const SECRET = 'a'.repeat(40);

describe(signSession.name, () => {
  it('is accepted until it expires, for the client it was made for', () => {
    const sut = signSession(SECRET, 'client-1', 1_000, 'session-1');
    expect(verifySession(SECRET, sut, 999)).toEqual({ clientId: 'client-1', sessionId: 'session-1' });
    expect(verifySession(SECRET, sut, 1_000)).toBeNull();
  });

  it('is refused when any character is changed, or under another secret', () => {
    const sut = signSession(SECRET, 'client-1', 10_000, 'session-1');
    for (let i = 0; i < sut.length; i++) {
      const c = sut[i] === 'A' ? 'B' : 'A';
      expect(verifySession(SECRET, sut.slice(0, i) + c + sut.slice(i + 1), 0)).toBeNull();
    }
    expect(verifySession('b'.repeat(40), sut, 0)).toBeNull();
    expect(verifySession(SECRET, '', 0)).toBeNull();
    expect(verifySession(SECRET, 'x.y', 0)).toBeNull();
  });

  it('names its session (a fresh id per login, so two logins never share a cookie)', () => {
    expect(signSession(SECRET, 'c', 5, 'session-1')).not.toBe(signSession(SECRET, 'c', 5, 'session-2'));
    expect(verifySession(SECRET, signSession(SECRET, 'c', 5, 'session-2'), 0)?.sessionId).toBe('session-2');
  });
});

describe(sessionCookie.name, () => {
  it('is HttpOnly, SameSite=Strict, scoped to /status, with a lifetime; Secure when asked', () => {
    const sut = sessionCookie('tok', 900_000, false);
    expect(sut).toBe(`${STATUS_COOKIE}=tok; Path=/status; Max-Age=900; HttpOnly; SameSite=Strict`);
    expect(sessionCookie('tok', 900_000, true)).toContain('; Secure');
    expect(sessionCookie('', 0, false)).toContain('Max-Age=0');
  });
});

describe(cookieValue.name, () => {
  it('finds the session cookie among others, and nothing when it is absent', () => {
    expect(cookieValue(`a=1; ${STATUS_COOKIE}=abc.def; b=2`)).toBe('abc.def');
    expect(cookieValue('a=1')).toBeUndefined();
    expect(cookieValue(undefined)).toBeUndefined();
  });
});
