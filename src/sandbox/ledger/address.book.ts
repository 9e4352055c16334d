/**
 * Interned addresses. Listings and tickets store a 32-bit index instead of a 44-character string, which is
 * most of what keeps a million listings well under the memory budget; the quoted form is cached because page
 * serialisation emits the same seller thousands of times.
 */
export class AddressBook {
  private readonly byAddress = new Map<string, number>();
  private readonly addresses: string[] = [];
  private readonly quotedForms: string[] = [];
  /** The quoted forms again as ASCII bytes, back to back (offsets in quotedAt), for Buffer page writers. */
  private quotedBytes = Buffer.allocUnsafe(64 * 1024);
  private quotedAt = new Uint32Array(1025);
  /** Longest quoted form in bytes, so a writer can reserve room for any address. */
  maxQuotedBytes = 4;

  intern(address: string): number {
    let index = this.byAddress.get(address);
    if (index === undefined) {
      index = this.addresses.length;
      this.addresses.push(address);
      const quoted = `"${address}"`;
      this.quotedForms.push(quoted);
      this.byAddress.set(address, index);
      this.appendBytes(index, quoted);
    }
    return index;
  }

  /** Index of an address already known, or -1; lookups never grow the book. */
  find(address: string): number {
    return this.byAddress.get(address) ?? -1;
  }

  get(index: number): string {
    return this.addresses[index];
  }

  /** JSON text of the address, or `null` for the -1 "absent" index. */
  quoted(index: number): string {
    return index < 0 ? 'null' : this.quotedForms[index];
  }

  /** Writes the JSON text of the address (or `null`) into `out` at `pos`; returns the position after it. */
  writeQuoted(index: number, out: Buffer, pos: number): number {
    if (index < 0) {
      out[pos] = 0x6e; // n
      out[pos + 1] = 0x75; // u
      out[pos + 2] = 0x6c; // l
      out[pos + 3] = 0x6c; // l
      return pos + 4;
    }
    // A JS loop beats a native copy call for ~46 bytes.
    const bytes = this.quotedBytes;
    const end = this.quotedAt[index + 1];
    for (let i = this.quotedAt[index]; i < end; i++) out[pos++] = bytes[i];
    return pos;
  }

  private appendBytes(index: number, quoted: string): void {
    if (index + 2 > this.quotedAt.length) {
      const at = new Uint32Array(this.quotedAt.length * 2);
      at.set(this.quotedAt);
      this.quotedAt = at;
    }
    const start = this.quotedAt[index];
    const end = start + Buffer.byteLength(quoted, 'utf8');
    if (end > this.quotedBytes.length) {
      const bytes = Buffer.allocUnsafe(Math.max(end, this.quotedBytes.length * 2));
      this.quotedBytes.copy(bytes, 0, 0, start);
      this.quotedBytes = bytes;
    }
    // UTF-8, so even an address that is not base58 (the programmatic admin does not check) stays valid text.
    this.quotedBytes.write(quoted, start, 'utf8');
    this.quotedAt[index + 1] = end;
    this.maxQuotedBytes = Math.max(this.maxQuotedBytes, end - start);
  }

  get size(): number {
    return this.addresses.length;
  }
}
