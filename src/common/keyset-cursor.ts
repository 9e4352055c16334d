import { createHmac, timingSafeEqual } from 'node:crypto';
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
const SHAPE = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/;

/** The binding as one unambiguous string: filters sorted by name, absent ones dropped. */
function canonicalBinding(binding: CursorBinding): string {
  const filters = Object.keys(binding.filters)
    .filter((name) => binding.filters[name] !== undefined)
    .sort()
    .map((name) => [name, binding.filters[name]]);
  return JSON.stringify([VERSION, binding.sort, filters]);
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
export class KeysetCursorCodec {
  private readonly secret: Buffer;

  constructor(secret: string) {
    if (secret.length < CURSOR_SECRET_MIN_LENGTH)
      throw new Error(`cursor secret must be at least ${CURSOR_SECRET_MIN_LENGTH} characters`);
    this.secret = Buffer.from(secret, 'utf8');
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

  private mac(payload: string, binding: CursorBinding): Buffer {
    return createHmac('sha256', this.secret)
      .update(canonicalBinding(binding))
      .update('\n')
      .update(payload)
      .digest();
  }
}
