import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  RequestShapeError,
  assertIdempotencyKey,
  encodeInstructionBatch,
  encodeSubmission,
} from './requests';
import type { InstructionBatch } from '../upstream.types';

const list = (overrides: Record<string, unknown> = {}): unknown => ({
  instruction: 'list_ticket_v2',
  params: [
    {
      seller: 's',
      storage_fee_payer: 'f',
      listing_integrator_identity: 'i',
      listing_integrator_authority: 'a',
      stablecoin_mint: 'm',
      event_id: 18446744073709551615n,
      ticket_id: 1n,
      ask_price_minor: 9007199254740993n,
      payout_ata: 'p',
      expires_at: -9223372036854775808n,
      buyer_allow: null,
      ...overrides,
    },
  ],
});

describe('upstream request encoding', () => {
  it('sends every 64-bit value as an exact decimal string and keeps explicit nulls', () => {
    const body = JSON.parse(encodeInstructionBatch(list() as InstructionBatch)) as {
      platformInstructions: { params: Record<string, unknown>[] };
    };
    expect(body.platformInstructions.params[0]).toEqual({
      seller: 's',
      storage_fee_payer: 'f',
      listing_integrator_identity: 'i',
      listing_integrator_authority: 'a',
      stablecoin_mint: 'm',
      event_id: '18446744073709551615',
      ticket_id: '1',
      ask_price_minor: '9007199254740993',
      buyer_allow: null,
      payout_ata: 'p',
      expires_at: '-9223372036854775808',
    });
  });

  it('round-trips any u64 ids through the request body', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), (id) => {
        const body = encodeInstructionBatch({
          instruction: 'cancel_listing_v1',
          params: [{ event_id: id, ticket_id: id, canceller: 'c' }],
        });
        expect(body).toContain(`"event_id":"${id}"`);
      }),
    );
  });

  it.each([
    ['a negative u64', list({ ticket_id: -1n })],
    ['a u64 past 2^64-1', list({ event_id: 2n ** 64n })],
    ['a number instead of bigint', list({ ticket_id: 1 })],
    ['an i64 past its range', list({ expires_at: 2n ** 63n })],
    ['an empty address', list({ seller: '' })],
    ['no params', { instruction: 'cancel_listing_v1', params: [] }],
    ['an unknown instruction', { instruction: 'buy_v9', params: [{}] }],
    [
      'a repeated (event_id, ticket_id) pair',
      {
        instruction: 'cancel_listing_v1',
        params: [
          { event_id: 1n, ticket_id: 2n, canceller: 'c' },
          { event_id: 1n, ticket_id: 2n, canceller: 'd' },
        ],
      },
    ],
  ])('refuses %s before sending', (_name, batch) => {
    expect(() => encodeInstructionBatch(batch as InstructionBatch)).toThrow(RequestShapeError);
  });

  it('checks idempotency keys: 1..255 header-safe characters', () => {
    for (const ok of ['a', 'k'.repeat(255), 'order-1:attempt 2'])
      expect(() => assertIdempotencyKey(ok)).not.toThrow();
    for (const bad of ['', 'k'.repeat(256), ' a', 'a ', 'a\nb', 'ü', undefined]) {
      expect(() => assertIdempotencyKey(bad)).toThrow(RequestShapeError);
    }
  });

  it('defaults additionalSignatures to an empty array', () => {
    expect(JSON.parse(encodeSubmission({ signedTransaction: 'AQ==' }))).toEqual({
      signedTransaction: 'AQ==',
      additionalSignatures: [],
    });
    expect(() => encodeSubmission({ signedTransaction: '' })).toThrow(RequestShapeError);
  });
});
