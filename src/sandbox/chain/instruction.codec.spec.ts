import { Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeInstruction, encodeBatch, encodeNonce } from './instruction.codec';
import type { InstructionBatch } from './instruction.model';

const address = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => bs58.encode(b));
const u64 = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
const i64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
const nullable = fc.option(address, { nil: null });

const batchArb: fc.Arbitrary<InstructionBatch> = fc.oneof(
  fc.record({
    instruction: fc.constant('accept_offer_v2' as const),
    params: fc.array(
      fc.record({
        eventId: u64,
        ticketId: u64,
        permitVersion: u64,
        buyer: address,
        integratorAuthority: address,
        sellerPayout: address,
        royaltyDestinations: fc.array(address, { maxLength: 4 }),
        ticketTypeConfig: nullable,
        integratorIdentity: address,
        stablecoinMint: address,
      }),
      { minLength: 1, maxLength: 3 },
    ),
  }),
  fc.record({
    instruction: fc.constant('cancel_listing_v1' as const),
    params: fc.array(fc.record({ eventId: u64, ticketId: u64, canceller: address }), {
      minLength: 1,
      maxLength: 3,
    }),
  }),
  fc.record({
    instruction: fc.constant('list_ticket_v2' as const),
    params: fc.array(
      fc.record({
        seller: address,
        storageFeePayer: address,
        listingIntegratorIdentity: address,
        listingIntegratorAuthority: address,
        stablecoinMint: address,
        eventId: u64,
        ticketId: u64,
        askPriceMinor: u64,
        buyerAllow: nullable,
        payoutAta: address,
        expiresAt: i64,
        ticketTypeConfig: nullable,
      }),
      { minLength: 1, maxLength: 3 },
    ),
  }),
);

describe('instruction codec', () => {
  const signer = Keypair.generate().publicKey;
  const program = Keypair.generate().publicKey;

  it('decodes exactly what it encoded', () => {
    fc.assert(
      fc.property(batchArb, (batch) => {
        const decoded = encodeBatch(batch, signer, program).map(decodeInstruction);
        expect(decoded.map((d) => d?.instruction)).toEqual(batch.params.map(() => batch.instruction));
        expect(decoded.map((d) => d?.params)).toEqual(batch.params);
        expect(decoded.every((d) => d?.signer === signer.toBase58())).toBe(true);
      }),
    );
  });

  it('treats the nonce as a no-op and unknown data as foreign', () => {
    expect(decodeInstruction(encodeNonce(5n, program))).toBeNull();
    const [ix] = encodeBatch(
      {
        instruction: 'cancel_listing_v1',
        params: [{ eventId: 1n, ticketId: 2n, canceller: signer.toBase58() }],
      },
      signer,
      program,
    );
    ix.data = Buffer.concat([ix.data, Buffer.from([0])]);
    expect(decodeInstruction(ix)).toBeUndefined();
  });
});
