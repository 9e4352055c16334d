import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('./api-key', async (original) => {
  const actual = await original<typeof import('./api-key')>();
  return { ...actual, hashApiKey: vi.fn<typeof actual.hashApiKey>(actual.hashApiKey) };
});
import { loadAuthConfig } from '../config/auth.config';
import * as apiKey from './api-key';
import { ApiKeyAuthenticator } from './api-key.authenticator';
import type { ApiClientsService, VerifyResult } from './api-clients.service';

const CLIENT = { id: 'c1', name: 'one', scopes: ['admin' as const], binding: null };

function setup(ttl: string) {
  let answer: VerifyResult = { ok: true, client: CLIENT };
  const clients = {
    verify: vi.fn<(key: string) => Promise<VerifyResult>>(async () => answer),
    touchLastUsed: vi.fn<(id: string) => Promise<void>>(async () => undefined),
  };
  const sut = new ApiKeyAuthenticator(
    clients as unknown as ApiClientsService,
    loadAuthConfig({ NODE_ENV: 'test', API_KEY_CACHE_TTL_MS: ttl }),
  );
  return { sut, clients, setAnswer: (a: VerifyResult) => (answer = a) };
}

describe(ApiKeyAuthenticator.name, () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('trusts a verified key for at most API_KEY_CACHE_TTL_MS, then sees the revocation', async () => {
    const { sut, clients, setAnswer } = setup('2000');
    expect((await sut.authenticate('k')).ok).toBe(true);
    setAnswer({ ok: false, reason: 'revoked' });
    vi.advanceTimersByTime(999);
    expect((await sut.authenticate('k')).ok).toBe(true);
    vi.advanceTimersByTime(1002);
    expect(await sut.authenticate('k')).toEqual({ ok: false, reason: 'revoked' });
    expect(clients.verify).toHaveBeenCalledTimes(2);
  });

  it('a hit in the second half of the TTL answers from the cache and renews the entry in the background', async () => {
    const { sut, clients } = setup('2000');
    await sut.authenticate('k');
    vi.advanceTimersByTime(1500);
    // Two hits while the refresh is out: one background verification.
    await Promise.all([sut.authenticate('k'), sut.authenticate('k')]);
    expect(clients.verify).toHaveBeenCalledTimes(2);
    await new Promise((resolve) => setImmediate(resolve));
    // Past the first entry's expiry: the renewed entry answers, no verification on the request path.
    vi.advanceTimersByTime(900);
    expect((await sut.authenticate('k')).ok).toBe(true);
    expect(clients.verify).toHaveBeenCalledTimes(2);
  });

  it('a refresh that finds the key revoked drops it before its expiry', async () => {
    const { sut, clients, setAnswer } = setup('2000');
    await sut.authenticate('k');
    setAnswer({ ok: false, reason: 'revoked' });
    vi.advanceTimersByTime(1500);
    expect((await sut.authenticate('k')).ok).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(await sut.authenticate('k')).toEqual({ ok: false, reason: 'revoked' });
    expect(clients.verify).toHaveBeenCalledTimes(3);
  });

  it('a refresh that was out when the client was invalidated caches nothing', async () => {
    const { sut, clients, setAnswer } = setup('2000');
    await sut.authenticate('k');
    vi.advanceTimersByTime(1500);
    let release: ((r: VerifyResult) => void) | undefined;
    clients.verify.mockImplementationOnce(() => new Promise<VerifyResult>((r) => (release = r)));
    await sut.authenticate('k');
    sut.invalidate('c1');
    release?.({ ok: true, client: CLIENT });
    await new Promise((resolve) => setImmediate(resolve));
    setAnswer({ ok: false, reason: 'revoked' });
    expect(await sut.authenticate('k')).toEqual({ ok: false, reason: 'revoked' });
  });

  it('invalidate() forgets a client at once', async () => {
    const { sut, setAnswer } = setup('5000');
    await sut.authenticate('k');
    setAnswer({ ok: false, reason: 'revoked' });
    sut.invalidate('c1');
    expect((await sut.authenticate('k')).ok).toBe(false);
  });

  it('never caches failures, and with TTL 0 checks every request', async () => {
    const failing = setup('5000');
    failing.setAnswer({ ok: false, reason: 'unknown' });
    await failing.sut.authenticate('k');
    await failing.sut.authenticate('k');
    expect(failing.clients.verify).toHaveBeenCalledTimes(2);
    const uncached = setup('0');
    await uncached.sut.authenticate('k');
    await uncached.sut.authenticate('k');
    expect(uncached.clients.verify).toHaveBeenCalledTimes(2);
  });

  it('records last use at most once a minute per client', async () => {
    const { sut, clients } = setup('0');
    await sut.authenticate('k');
    await sut.authenticate('k');
    expect(clients.touchLastUsed).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(60_001);
    await sut.authenticate('k');
    expect(clients.touchLastUsed).toHaveBeenCalledTimes(2);
  });

  it('a connection presenting the same key again skips the hash; another key on it is verified as itself', async () => {
    const { sut, clients, setAnswer } = setup('5000');
    const hash = vi.mocked(apiKey.hashApiKey);
    hash.mockClear();
    const connection = {};
    await sut.authenticate('k', connection);
    await sut.authenticate('k', connection);
    await sut.authenticate('k', connection);
    expect(hash).toHaveBeenCalledTimes(1);
    expect(clients.verify).toHaveBeenCalledTimes(1);
    setAnswer({ ok: false, reason: 'unknown' });
    expect(await sut.authenticate('other', connection)).toEqual({ ok: false, reason: 'unknown' });
    expect(clients.verify).toHaveBeenLastCalledWith('other');
    // Back to the first key: its cached verification is found again (same cache key).
    expect((await sut.authenticate('k', connection)).ok).toBe(true);
    expect(clients.verify).toHaveBeenCalledTimes(2);
    // A revocation through this process still drops it.
    sut.invalidate(CLIENT.id);
    expect(await sut.authenticate('k', connection)).toEqual({ ok: false, reason: 'unknown' });
  });
});
