import { PublicKey, TransactionInstruction, type AccountMeta } from '@solana/web3.js';
import { unreachable, type InstructionBatch, type LedgerInstruction } from './instruction.model';

/**
 * Wire encoding of the sandbox program's instructions. Addresses travel as account keys (so the message
 * de-duplicates repeated mints and integrators like a real program would); integers and null-flags travel in
 * the data: tag u8, then little-endian u64/i64 fields, then flag bytes.
 */
const TAG = { nonce: 0, accept_offer_v2: 1, list_ticket_v2: 2, cancel_listing_v1: 3 } as const;

const key = (address: string): AccountMeta => ({
  pubkey: new PublicKey(address),
  isSigner: false,
  isWritable: false,
});

function u64s(values: readonly bigint[], signed = -1): Buffer {
  const buf = Buffer.alloc(values.length * 8);
  values.forEach((v, i) => (i === signed ? buf.writeBigInt64LE(v, i * 8) : buf.writeBigUInt64LE(v, i * 8)));
  return buf;
}

/** One TransactionInstruction per param, in request order; the custodial signer is account 0 of each. */
export function encodeBatch(
  batch: InstructionBatch,
  signer: PublicKey,
  programId: PublicKey,
): TransactionInstruction[] {
  const signerMeta: AccountMeta = { pubkey: signer, isSigner: true, isWritable: true };
  const make = (tag: number, ints: Buffer, flags: number[], keys: AccountMeta[]): TransactionInstruction =>
    new TransactionInstruction({
      programId,
      keys: [signerMeta, ...keys],
      data: Buffer.concat([Buffer.from([tag]), ints, Buffer.from(flags)]),
    });
  switch (batch.instruction) {
    case 'accept_offer_v2':
      return batch.params.map((p) => {
        if (p.royaltyDestinations.length > 255) throw new RangeError('too many royalty destinations');
        const optional = p.ticketTypeConfig === null ? [] : [key(p.ticketTypeConfig)];
        const keys = [
          p.buyer,
          p.integratorAuthority,
          p.sellerPayout,
          p.integratorIdentity,
          p.stablecoinMint,
        ].map(key);
        return make(
          TAG.accept_offer_v2,
          u64s([p.eventId, p.ticketId, p.permitVersion]),
          [optional.length, p.royaltyDestinations.length],
          [...keys, ...optional, ...p.royaltyDestinations.map(key)],
        );
      });
    case 'list_ticket_v2':
      return batch.params.map((p) => {
        const optional = [p.buyerAllow, p.ticketTypeConfig].filter((a): a is string => a !== null).map(key);
        const flags = (p.buyerAllow === null ? 0 : 1) | (p.ticketTypeConfig === null ? 0 : 2);
        const addresses = [
          p.seller,
          p.storageFeePayer,
          p.listingIntegratorIdentity,
          p.listingIntegratorAuthority,
          p.stablecoinMint,
          p.payoutAta,
        ];
        const ints = u64s([p.eventId, p.ticketId, p.askPriceMinor, p.expiresAt], 3);
        return make(TAG.list_ticket_v2, ints, [flags], [...addresses.map(key), ...optional]);
      });
    case 'cancel_listing_v1':
      return batch.params.map((p) =>
        make(TAG.cancel_listing_v1, u64s([p.eventId, p.ticketId]), [], [key(p.canceller)]),
      );
    default:
      return unreachable(batch);
  }
}

/**
 * A no-op instruction carrying a per-signing counter. Without it two signings of the same batch in the same
 * blockhash window would produce byte-identical transactions (ed25519 is deterministic) and share one id.
 */
export function encodeNonce(nonce: bigint, programId: PublicKey): TransactionInstruction {
  const data = Buffer.alloc(9);
  data.writeBigUInt64LE(nonce, 1);
  return new TransactionInstruction({ programId, keys: [], data });
}

/**
 * Inverse of encodeBatch for one instruction: null for the nonce no-op, undefined when the bytes are not a
 * sandbox instruction.
 */
export function decodeInstruction(ix: TransactionInstruction): LedgerInstruction | null | undefined {
  const d = ix.data;
  if (d.length === 9 && d[0] === TAG.nonce && ix.keys.length === 0) return null;
  const keys = ix.keys.map((k) => k.pubkey.toBase58());
  if (d.length === 0 || keys.length < 2) return undefined;
  const signer = keys[0];
  const a = (i: number): string => keys[i];
  if (d[0] === TAG.accept_offer_v2 && d.length === 27) {
    const hasConfig = d[25] === 1;
    const royaltyStart = 6 + (hasConfig ? 1 : 0);
    if (keys.length !== royaltyStart + d[26]) return undefined;
    return {
      instruction: 'accept_offer_v2',
      signer,
      params: {
        eventId: d.readBigUInt64LE(1),
        ticketId: d.readBigUInt64LE(9),
        permitVersion: d.readBigUInt64LE(17),
        buyer: a(1),
        integratorAuthority: a(2),
        sellerPayout: a(3),
        integratorIdentity: a(4),
        stablecoinMint: a(5),
        ticketTypeConfig: hasConfig ? a(6) : null,
        royaltyDestinations: keys.slice(royaltyStart),
      },
    };
  }
  if (d[0] === TAG.list_ticket_v2 && d.length === 34) {
    const flags = d[33];
    let next = 7;
    const buyerAllow = (flags & 1) === 1 ? a(next++) : null;
    const ticketTypeConfig = (flags & 2) === 2 ? a(next++) : null;
    if (keys.length !== next) return undefined;
    return {
      instruction: 'list_ticket_v2',
      signer,
      params: {
        eventId: d.readBigUInt64LE(1),
        ticketId: d.readBigUInt64LE(9),
        askPriceMinor: d.readBigUInt64LE(17),
        expiresAt: d.readBigInt64LE(25),
        seller: a(1),
        storageFeePayer: a(2),
        listingIntegratorIdentity: a(3),
        listingIntegratorAuthority: a(4),
        stablecoinMint: a(5),
        payoutAta: a(6),
        buyerAllow,
        ticketTypeConfig,
      },
    };
  }
  if (d[0] === TAG.cancel_listing_v1 && d.length === 17 && keys.length === 2) {
    return {
      instruction: 'cancel_listing_v1',
      signer,
      params: { eventId: d.readBigUInt64LE(1), ticketId: d.readBigUInt64LE(9), canceller: a(1) },
    };
  }
  return undefined;
}
