import { createHash, hash, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { validationFailed } from './validation';

/** One column of a keyset position (ids, timestamps and u64s travel as strings). */
export type CursorValue = string | null;

/**
 * What a cursor was issued for: the sort order and every filter of the query. A cursor only
 * decodes under the same binding, so a cursor from another query, sort or filter set is a 400.
 * `undefined` filters count as absent; `null` is a value of its own.
 */
export interface CursorBinding {
  sort: string;
  filters: Record<string, string | null | undefined>;
}

/** Longest cursor accepted (the DTO bound and the codec's own check). */
export const CURSOR_MAX_LENGTH = 512;
/** Shortest secret the codec accepts (HMAC-SHA256 key). */
export const CURSOR_SECRET_MIN_LENGTH = 32;

const VERSION = 'v1';
const MAC_BYTES = 32;
/** SHA-256 block size: HMAC's key pads are one block each (RFC 2104). */
const BLOCK_BYTES = 64;
const SHAPE = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/;

/** The binding as one unambiguous string: filters sorted by name, absent ones dropped. */
function canonicalBinding(binding: CursorBinding): string {
  const filters: [string, string | null][] = [];
  for (const name of Object.keys(binding.filters).sort()) {
    const value = binding.filters[name];
    if (value !== undefined) filters.push([name, value]);
  }
  return JSON.stringify([VERSION, binding.sort, filters]);
}

/** HMAC-SHA256's inner and outer key blocks (key ⊕ ipad, key ⊕ opad; a longer key is hashed first). */
function keyPads(secret: Buffer): { inner: Buffer; outer: Buffer } {
  const key = secret.length > BLOCK_BYTES ? createHash('sha256').update(secret).digest() : secret;
  const inner = Buffer.alloc(BLOCK_BYTES, 0x36);
  const outer = Buffer.alloc(BLOCK_BYTES, 0x5c);
  for (let i = 0; i < key.length; i++) {
    inner[i] = (inner[i] ?? 0) ^ (key[i] ?? 0);
    outer[i] = (outer[i] ?? 0) ^ (key[i] ?? 0);
  }
  return { inner, outer };
}

function invalidCursor(): Error {
  return validationFailed([{ field: 'cursor', problems: ['cursor is not a valid cursor for this query'] }]);
}

function isPosition(value: unknown): value is CursorValue[] {
  return Array.isArray(value) && value.every((v) => v === null || typeof v === 'string');
}

/**
 * Opaque, tamper-evident keyset cursors: `<base64url(JSON position)>.<base64url(HMAC-SHA256)>`,
 * the MAC over the binding and the payload with CURSOR_SECRET. Clients cannot forge a position,
 * reuse a cursor on another query, or learn more than the position's values (not encrypted: never
 * put a secret in a position). Every refusal is the same VALIDATION_FAILED naming `cursor`.
 */
/** Injection token of the cursor secret (AuthConfig.cursorSecret: CURSOR_SECRET, resolved by loadAuthConfig). */
export const CURSOR_SECRET = 'CURSOR_SECRET';

@Injectable()
export class KeysetCursorCodec {
  private readonly inner: Buffer;
  private readonly outer: Buffer;

  constructor(@Inject(CURSOR_SECRET) secret: string) {
    if (secret.length < CURSOR_SECRET_MIN_LENGTH)
      throw new Error(`cursor secret must be at least ${CURSOR_SECRET_MIN_LENGTH} characters`);
    ({ inner: this.inner, outer: this.outer } = keyPads(Buffer.from(secret, 'utf8')));
  }

  encode(position: readonly CursorValue[], binding: CursorBinding): string {
    const payload = Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');
    const cursor = `${payload}.${this.mac(payload, binding).toString('base64url')}`;
    if (cursor.length > CURSOR_MAX_LENGTH) throw new Error('keyset position too long for a cursor');
    return cursor;
  }

  decode(cursor: string, binding: CursorBinding): CursorValue[] {
    const match = cursor.length <= CURSOR_MAX_LENGTH ? SHAPE.exec(cursor) : null;
    if (!match) throw invalidCursor();
    const [, payload, mac] = match as unknown as [string, string, string];
    const presented = Buffer.from(mac, 'base64url');
    const expected = this.mac(payload, binding);
    if (presented.length !== MAC_BYTES || !timingSafeEqual(presented, expected)) throw invalidCursor();
    let position: unknown;
    try {
      position = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw invalidCursor();
    }
    if (!isPosition(position)) throw invalidCursor();
    return position;
  }

  /**
   * HMAC-SHA256 over `binding \n payload`, from the key pads computed once: two one-shot digests instead
   * of a keyed `Hmac` object per call (the same bytes as `createHmac`; the spec checks both agree).
   */
  private mac(payload: string, binding: CursorBinding): Buffer {
    const message = Buffer.from(`${canonicalBinding(binding)}\n${payload}`, 'utf8');
    const inner = hash('sha256', Buffer.concat([this.inner, message]), 'buffer');
    return hash('sha256', Buffer.concat([this.outer, inner]), 'buffer');
  }
}
