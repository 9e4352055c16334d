/**
 * Interned addresses. Listings and tickets store a 32-bit index instead of a 44-character string, which is
 * most of what keeps a million listings well under the memory budget; the quoted form is cached because page
 * serialisation emits the same seller thousands of times.
 */
export class AddressBook {
  private readonly byAddress = new Map<string, number>();
  private readonly addresses: string[] = [];
  private readonly quotedForms: string[] = [];

  intern(address: string): number {
    let index = this.byAddress.get(address);
    if (index === undefined) {
      index = this.addresses.length;
      this.addresses.push(address);
      this.quotedForms.push(`"${address}"`);
      this.byAddress.set(address, index);
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

  get size(): number {
    return this.addresses.length;
  }
}
