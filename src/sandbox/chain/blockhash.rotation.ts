import bs58 from 'bs58';
import { seededBytes } from './prng';

/**
 * Recent blockhashes: one per rotation window, derived from the seed so they look like (and are) 32-byte
 * base58 values. A blockhash is usable until its window start plus the lifetime, like a real cluster where a
 * blockhash ages out after a fixed number of slots.
 */
export class BlockhashRotation {
  private readonly issued = new Map<string, number>();

  constructor(
    private readonly seed: string,
    private readonly rotationMs: number,
    private readonly lifetimeMs: number,
  ) {}

  /** The blockhash to put in a transaction signed at `nowMs`. */
  current(nowMs: number): string {
    const window = Math.floor(nowMs / this.rotationMs);
    const hash = bs58.encode(seededBytes(this.seed, 'blockhash', window));
    if (!this.issued.has(hash)) this.issued.set(hash, window * this.rotationMs + this.lifetimeMs);
    return hash;
  }

  /** When a blockhash this sandbox issued stops being valid, or undefined if it never issued it. */
  expiresAt(blockhash: string): number | undefined {
    return this.issued.get(blockhash);
  }
}
