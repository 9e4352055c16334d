import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  API_KEY_LENGTH,
  API_KEY_PATTERN,
  apiKeyChecksum,
  generateApiKey,
  hashApiKey,
  hashesEqual,
  parseApiKey,
  randomBase62,
} from './api-key';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

describe(generateApiKey.name, () => {
  it('generates trb_live_<43 base62>_<6 base62> keys that parse, with a lookup prefix', () => {
    for (let i = 0; i < 200; i++) {
      const key = generateApiKey();
      expect(key).toMatch(API_KEY_PATTERN);
      expect(key).toHaveLength(API_KEY_LENGTH);
      expect(parseApiKey(key)).toEqual({ key, lookupPrefix: key.slice(0, 19) });
    }
  });

  it('never repeats a key or a lookup prefix (10 000 draws)', () => {
    const keys = Array.from({ length: 10_000 }, generateApiKey);
    expect(new Set(keys).size).toBe(keys.length);
    expect(new Set(keys.map((k) => k.slice(0, 19))).size).toBe(keys.length);
  });

  it('draws base62 characters without modulo bias (every symbol roughly 1/62)', () => {
    const sample = randomBase62(62 * 2000);
    const counts = new Map<string, number>();
    for (const c of sample) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62);
    for (const n of counts.values()) expect(Math.abs(n - 2000)).toBeLessThan(400);
  });
});

describe(parseApiKey.name, () => {
  it('checksum is the CRC32 of the body as 6 base62 characters', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(...BASE62.split('')), minLength: 43, maxLength: 43 }),
        (random) => {
          const body = `trb_live_${random}`;
          const checksum = apiKeyChecksum(body);
          expect(checksum).toMatch(/^[0-9A-Za-z]{6}$/);
          expect(parseApiKey(`${body}_${checksum}`)).not.toBeNull();
        },
      ),
    );
  });

  it('any single-character substitution fails the checksum', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: API_KEY_LENGTH - 1 }),
        fc.constantFrom(...BASE62.split(''), '_', '-', ' '),
        (position, replacement) => {
          const key = generateApiKey();
          fc.pre(key[position] !== replacement);
          const mutated = key.slice(0, position) + replacement + key.slice(position + 1);
          expect(parseApiKey(mutated)).toBeNull();
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('rejects arbitrary strings and near-keys', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (s) => {
        expect(parseApiKey(s)).toBeNull();
      }),
    );
    const key = generateApiKey();
    for (const bad of [
      '',
      key.toUpperCase(),
      key.replace('trb_live_', 'trb_test_'),
      `${key} `,
      ` ${key}`,
      `${key}\n`,
      key.slice(1),
      `${key}0`,
      key.replace(/_(?=[^_]*$)/, '-'),
    ]) {
      expect(parseApiKey(bad)).toBeNull();
    }
  });
});

describe(hashApiKey.name, () => {
  it('is HMAC-SHA256 keyed by the pepper: deterministic, 32 bytes, pepper-dependent', () => {
    const key = generateApiKey();
    expect(hashApiKey('pepper-a', key)).toEqual(hashApiKey('pepper-a', key));
    expect(hashApiKey('pepper-a', key)).toHaveLength(32);
    expect(hashApiKey('pepper-a', key).equals(hashApiKey('pepper-b', key))).toBe(false);
    expect(hashApiKey('pepper-a', key).toString('hex')).not.toContain(key);
  });
});

describe(hashesEqual.name, () => {
  const base = Buffer.alloc(32, 7);
  const flipped = (at: number): Buffer => {
    const copy = Buffer.from(base);
    copy[at] = (copy[at] ?? 0) ^ 1;
    return copy;
  };
  it.each<[string, Buffer, boolean]>([
    ['the same bytes', Buffer.alloc(32, 7), true],
    ['first byte differs', flipped(0), false],
    ['middle byte differs', flipped(16), false],
    ['last byte differs', flipped(31), false],
    ['one byte shorter (a prefix)', base.subarray(0, 31), false],
    ['one byte longer', Buffer.concat([base, Buffer.alloc(1, 7)]), false],
    ['empty', Buffer.alloc(0), false],
  ])('%s → %s', (_name, other, expected) => {
    expect(hashesEqual(base, other)).toBe(expected);
  });
});
