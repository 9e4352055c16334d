import { Keypair, PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import { seededBytes } from './prng';

export type WalletKind = 'user' | 'integrator';

/** A reference to a custodial wallet by its owner, as the admin surface and tests name them. */
export interface WalletRef {
  kind: WalletKind;
  subject: string;
}

/**
 * Custodial keypairs derived from the seed: sha256(seed|kind|subject) is the ed25519 seed, so the same
 * SANDBOX_SEED always yields the same addresses and nothing has to be stored. Derivation costs ~0.2 ms,
 * hence the cache.
 */
export class WalletKeys {
  private readonly cache = new Map<string, Keypair>();
  readonly feePayer: Keypair;
  readonly programId: PublicKey;
  readonly stablecoinMint: string;

  constructor(private readonly seed: string) {
    this.feePayer = Keypair.fromSeed(seededBytes(seed, 'fee-payer'));
    this.programId = new PublicKey(seededBytes(seed, 'program'));
    this.stablecoinMint = this.syntheticAddress('stablecoin-mint');
  }

  keypair(kind: WalletKind, subject: string): Keypair {
    const cacheKey = `${kind}\u0000${subject}`;
    let keypair = this.cache.get(cacheKey);
    if (keypair === undefined) {
      keypair = Keypair.fromSeed(seededBytes(this.seed, kind, subject));
      this.cache.set(cacheKey, keypair);
    }
    return keypair;
  }

  address(kind: WalletKind, subject: string): string {
    return this.keypair(kind, subject).publicKey.toBase58();
  }

  /** An address nobody holds a key for (mints, token accounts, configs): 32 seeded bytes in base58. */
  syntheticAddress(...parts: readonly (string | number)[]): string {
    return bs58.encode(seededBytes(this.seed, 'address', ...parts));
  }
}

/** A ledger address here is the canonical base58 text of exactly 32 bytes. */
export function isAddress(value: unknown): value is string {
  if (typeof value !== 'string' || value.length < 32 || value.length > 44) return false;
  try {
    const bytes = bs58.decode(value);
    return bytes.length === 32 && bs58.encode(bytes) === value;
  } catch {
    return false;
  }
}

/** A transaction signature: canonical base58 of 64 bytes. */
export function decodeSignature(value: unknown): Buffer | undefined {
  if (typeof value !== 'string' || value.length < 64 || value.length > 88) return undefined;
  try {
    const bytes = bs58.decode(value);
    return bytes.length === 64 && bs58.encode(bytes) === value ? Buffer.from(bytes) : undefined;
  } catch {
    return undefined;
  }
}
