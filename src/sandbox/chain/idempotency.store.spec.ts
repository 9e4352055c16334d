import { describe, expect, it } from 'vitest';
import { IdempotencyStore, type IdempotencyEntry } from './idempotency.store';

const entry = (fingerprint: string, createdAtMs: number): IdempotencyEntry => ({
  operation: 'signUser',
  fingerprint,
  transactionId: 'a'.repeat(64),
  createdAtMs,
});

describe(IdempotencyStore.name, () => {
  it('replays the same payload, flags a different one, and forgets after the retention time', () => {
    const sut = new IdempotencyStore(1000);
    sut.remember('full', 'k1', entry('fp-A', 0));
    expect(sut.lookup('full', 'k1', 'fp-A', 999).kind).toBe('replay');
    expect(sut.lookup('full', 'k1', 'fp-B', 999).kind).toBe('conflict');
    expect(sut.lookup('full', 'k1', 'fp-B', 1000).kind).toBe('new');
    // Forgotten for good: the original payload is new again too.
    expect(sut.lookup('full', 'k1', 'fp-A', 1000).kind).toBe('new');
  });

  it("scopes keys per API key: two integrations never share or see each other's keys", () => {
    const sut = new IdempotencyStore(60_000);
    sut.remember('tenant-a', 'shared-key', entry('fp-A', 0));
    expect(sut.lookup('tenant-b', 'shared-key', 'fp-A', 1).kind).toBe('new');
    expect(sut.get('tenant-b', 'shared-key', 1)).toBeUndefined();
  });
});
