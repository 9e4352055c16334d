import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * API key format: `trb_live_<43 base62 random>_<6 base62 CRC32>` (59 characters).
 * - `trb_live_` makes a leaked key recognisable to secret scanners;
 * - 43 base62 characters carry 256 bits from the CSPRNG;
 * - the CRC32 of everything before the last `_` lets scanners and the service reject typos and
 *   random strings without a database lookup (CRC32 detects every single-character change).
 * The first LOOKUP_RANDOM_CHARS random characters, with the prefix, are the key's public lookup id
 * (`key_prefix` column); the whole key is only ever stored as HMAC-SHA256(pepper, key).
 */
export const API_KEY_PREFIX = 'trb_live_';
export const API_KEY_RANDOM_LENGTH = 43;
export const API_KEY_CHECKSUM_LENGTH = 6;
export const LOOKUP_RANDOM_CHARS = 10;
export const API_KEY_PATTERN = /^trb_live_([0-9A-Za-z]{43})_([0-9A-Za-z]{6})$/;
/** Longest input worth parsing; anything longer is rejected before any work. */
export const API_KEY_LENGTH = API_KEY_PREFIX.length + API_KEY_RANDOM_LENGTH + 1 + API_KEY_CHECKSUM_LENGTH;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Unbiased base62 from the CSPRNG: bytes >= 248 (4 × 62) are rejected and redrawn. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

function toBase62Fixed(value: number, width: number): string {
  let rest = value;
  let out = '';
  while (rest > 0) {
    out = BASE62[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out.padStart(width, '0');
}

/** CRC32 of `trb_live_<random>` as 6 base62 characters (62^6 > 2^32). */
export function apiKeyChecksum(body: string): string {
  return toBase62Fixed(crc32(body), API_KEY_CHECKSUM_LENGTH);
}

export function generateApiKey(): string {
  const body = `${API_KEY_PREFIX}${randomBase62(API_KEY_RANDOM_LENGTH)}`;
  return `${body}_${apiKeyChecksum(body)}`;
}

export interface ParsedApiKey {
  key: string;
  /** Public lookup id stored in `key_prefix`: `trb_live_` + the first random characters. */
  lookupPrefix: string;
}

/** The key when it has the format and a matching checksum; null for anything else. */
export function parseApiKey(candidate: string): ParsedApiKey | null {
  if (candidate.length !== API_KEY_LENGTH) return null;
  const match = API_KEY_PATTERN.exec(candidate);
  if (!match) return null;
  const body = candidate.slice(0, API_KEY_PREFIX.length + API_KEY_RANDOM_LENGTH);
  if (apiKeyChecksum(body) !== match[2]) return null;
  return { key: candidate, lookupPrefix: candidate.slice(0, API_KEY_PREFIX.length + LOOKUP_RANDOM_CHARS) };
}

/** What the database stores: HMAC-SHA256 keyed with the server-side pepper (32 bytes). */
export function hashApiKey(pepper: string, key: string): Buffer {
  return createHmac('sha256', pepper).update(key, 'utf8').digest();
}

/** Compared in constant time; a length mismatch (corrupt row) is simply unequal. */
export function hashesEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
