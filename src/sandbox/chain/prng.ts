import { createHash } from 'node:crypto';

/** 32 bytes of sha256 over the '|'-joined parts: the one derivation primitive for every seeded value. */
export function seededBytes(...parts: readonly (string | number | bigint)[]): Buffer {
  return createHash('sha256').update(parts.join('|')).digest();
}

/**
 * Small, fast, seedable PRNG (sfc32). Not cryptographic: it only has to make generated data and fault
 * decisions reproducible from SANDBOX_SEED.
 */
export class SeededRandom {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(...seedParts: readonly (string | number | bigint)[]) {
    const bytes = seededBytes('prng', ...seedParts);
    this.a = bytes.readUInt32LE(0);
    this.b = bytes.readUInt32LE(4);
    this.c = bytes.readUInt32LE(8);
    this.d = bytes.readUInt32LE(12);
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return p > 0 && this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }
}
