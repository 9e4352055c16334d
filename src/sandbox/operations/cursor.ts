import { createHmac, timingSafeEqual } from 'node:crypto';

export interface CursorPosition {
  resource: 'events' | 'listings';
  /** The filter the walk started with ('*' = none); a cursor only continues the walk it came from. */
  scope: string;
  /** Ledger generation; a reset invalidates earlier cursors. */
  epoch: number;
  /** First insertion sequence not yet served. */
  from: number;
  /**
   * Empty pages served in a row at this position (empty_page fault). It makes the cursor after an injected
   * empty page new and distinct, as a real server's would be, while the position stays where it was.
   */
  stall: number;
}

const MAX_CURSOR_LENGTH = 512;
const TAG_BYTES = 16;

/**
 * Opaque, tamper-evident cursors: base64url(payload) "." base64url(HMAC-SHA256 truncated to 128 bits).
 * The position is an insertion sequence, not an offset, so inserts and removals between pages neither skip
 * nor repeat items that stayed listed.
 */
export class CursorCodec {
  constructor(private readonly secret: Buffer) {}

  encode(position: CursorPosition): string {
    const payload = Buffer.from(
      `v2|${position.resource}|${position.scope}|${position.epoch}|${position.from}|${position.stall}`,
    ).toString('base64url');
    return `${payload}.${this.tag(payload).toString('base64url')}`;
  }

  /** The position, or undefined for anything forged, truncated, garbled or from another walk shape. */
  decode(cursor: string): CursorPosition | undefined {
    if (cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH) return undefined;
    const dot = cursor.indexOf('.');
    if (dot <= 0) return undefined;
    const payload = cursor.slice(0, dot);
    const tag = Buffer.from(cursor.slice(dot + 1), 'base64url');
    if (tag.length !== TAG_BYTES || tag.toString('base64url') !== cursor.slice(dot + 1)) return undefined;
    if (!timingSafeEqual(tag, this.tag(payload))) return undefined;
    const parts = Buffer.from(payload, 'base64url').toString('utf8').split('|');
    if (parts.length !== 6 || parts[0] !== 'v2') return undefined;
    const [, resource, scope, epoch, from, stall] = parts;
    if (resource !== 'events' && resource !== 'listings') return undefined;
    if (![epoch, from, stall].every((n) => /^\d{1,15}$/.test(n))) return undefined;
    return { resource, scope, epoch: Number(epoch), from: Number(from), stall: Number(stall) };
  }

  private tag(payload: string): Buffer {
    return createHmac('sha256', this.secret).update(payload).digest().subarray(0, TAG_BYTES);
  }
}
