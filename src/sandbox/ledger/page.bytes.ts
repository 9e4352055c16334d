/** ASCII text as bytes, for the constant pieces of an item. */
export function asciiBytes(text: string): Uint8Array {
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}

/**
 * Page buffers handed back once a page's bytes have reached the socket, for the next page. A fresh ~1 MB
 * buffer per page is external memory, and V8 answers a stream of those with a scavenge every few pages
 * ("external memory pressure": most of the sandbox's GC time at 1M listings). Only a few are kept; a page
 * whose response never finishes (a dropped connection) simply leaves its buffer to the GC.
 */
const freePageBuffers: Buffer[] = [];
const MAX_FREE_PAGE_BUFFERS = 4;
const MAX_POOLED_PAGE_BYTES = 4 * 1_048_576;

function takePageBuffer(capacity: number): Buffer {
  for (let i = freePageBuffers.length - 1; i >= 0; i--) {
    const buf = freePageBuffers[i];
    if (buf.length >= capacity) {
      freePageBuffers.splice(i, 1);
      return buf;
    }
  }
  return Buffer.allocUnsafeSlow(capacity);
}

function releasePageBuffer(buf: Buffer): void {
  if (freePageBuffers.length < MAX_FREE_PAGE_BUFFERS && buf.length <= MAX_POOLED_PAGE_BYTES)
    freePageBuffers.push(buf);
}

const QUOTE = 0x22;
const MINUS = 0x2d;

/** ASCII text into `buf` at `pos`; returns the position after it. */
export function writeAscii(buf: Buffer, pos: number, text: string): number {
  for (let i = 0; i < text.length; i++) buf[pos++] = text.charCodeAt(i);
  return pos;
}

/**
 * An integer with |value| <= 2^53-1 into `buf` at `pos`, in decimal, quoted unless `bare`; returns the
 * position after it.
 */
export function writeInt(buf: Buffer, pos: number, value: number, bare: boolean): number {
  if (!bare) buf[pos++] = QUOTE;
  let v = value;
  if (v < 0) {
    buf[pos++] = MINUS;
    v = -v;
  }
  let digits = 1;
  for (let p = 10; p <= v; p *= 10) digits++;
  pos += digits;
  let at = pos;
  do {
    const q = Math.floor(v / 10);
    buf[--at] = 0x30 + (v - q * 10);
    v = q;
  } while (v > 0);
  if (!bare) buf[pos++] = QUOTE;
  return pos;
}

/**
 * A growable byte buffer for one page. Every piece is written as bytes: constant and cached pieces with
 * `Uint8Array.prototype.set` (a V8 builtin: ~15–30 ns for 20–400 bytes on this machine, where a JS byte loop
 * took 70–720 ns), numbers digit by digit. No per-item string is built.
 */
export class PageBytes {
  buf: Buffer;
  pos = 0;
  /** `pooled`: take (and later give back) a page buffer; otherwise a private buffer of its own. */
  constructor(capacity: number, pooled = true) {
    this.buf = pooled ? takePageBuffer(capacity) : Buffer.alloc(capacity);
  }

  ensure(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    const next = takePageBuffer(Math.max(this.pos + bytes, this.buf.length * 2));
    this.buf.copy(next, 0, 0, this.pos);
    releasePageBuffer(this.buf);
    this.buf = next;
  }

  /** ASCII text (rare pieces: values past 2^53, envelopes). */
  ascii(text: string): void {
    this.pos = writeAscii(this.buf, this.pos, text);
  }

  raw(bytes: Uint8Array): void {
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** An integer with |value| <= 2^53-1, in decimal, quoted unless `bare`. */
  int(value: number, bare: boolean): void {
    this.pos = writeInt(this.buf, this.pos, value, bare);
  }

  /** A copy of the bytes written since `start`, to keep as a cached fragment. */
  copyFrom(start: number): Uint8Array {
    return new Uint8Array(this.buf.subarray(start, this.pos));
  }

  bytes(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  /** Gives the buffer back for another page: only once nothing reads bytes() any more. */
  release(): void {
    releasePageBuffer(this.buf);
  }
}
