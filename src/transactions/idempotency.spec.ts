import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IDEMPOTENCY_KEY_PATTERN } from '../common/idempotency-key';
import { deriveUpstreamKey } from './idempotency';

describe(deriveUpstreamKey.name, () => {
  const key = fc.stringMatching(/^[\x21-\x7e]{1,255}$/);

  it('is deterministic, header-safe and within the contract limit of 255 characters', () => {
    fc.assert(
      fc.property(fc.uuid(), key, (client, k) => {
        const sut = deriveUpstreamKey('secret', client, k);
        expect(sut).toBe(deriveUpstreamKey('secret', client, k));
        expect(sut).toHaveLength(48);
        expect(IDEMPOTENCY_KEY_PATTERN.test(sut)).toBe(true);
      }),
    );
  });

  it('differs between clients, keys and secrets, so two clients never collide upstream', () => {
    fc.assert(
      fc.property(fc.uuid(), fc.uuid(), key, key, (a, b, k1, k2) => {
        fc.pre(a !== b && k1 !== k2);
        const sut = deriveUpstreamKey('secret', a, k1);
        expect(deriveUpstreamKey('secret', b, k1)).not.toBe(sut);
        expect(deriveUpstreamKey('secret', a, k2)).not.toBe(sut);
        expect(deriveUpstreamKey('other', a, k1)).not.toBe(sut);
      }),
    );
  });
});
