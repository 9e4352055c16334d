import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { U64_MAX } from '../common/int64';
import { canonicalBatchJson, parseInstructionBatch } from './instruction-batch.parser';

const address = fc.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
const u64 = fc.bigInt({ min: 0n, max: U64_MAX });

const cancelParams = fc
  .uniqueArray(fc.tuple(u64, u64), { minLength: 1, maxLength: 5, selector: ([e, t]) => `${e}/${t}` })
  .chain((pairs) =>
    fc.tuple(
      ...pairs.map(([e, t]) => address.map((canceller) => ({ event_id: e, ticket_id: t, canceller }))),
    ),
  );

/** Wire form: u64 as decimal strings, sometimes with leading zeros, or JSON integers when safe. */
const wire = (value: bigint, zeros: number, asNumber: boolean): string | number =>
  asNumber && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : '0'.repeat(zeros) + value.toString();

const fields = (body: unknown): string[] => {
  const sut = parseInstructionBatch(body, 2);
  return sut.ok ? [] : sut.problems.map((p) => p.field);
};

describe(parseInstructionBatch.name, () => {
  it('accepts every valid cancel batch in any u64 spelling, and its canonical JSON parses back to itself', () => {
    fc.assert(
      fc.property(cancelParams, fc.nat(3), fc.boolean(), (params, zeros, asNumber) => {
        const body = {
          platformInstructions: {
            instruction: 'cancel_listing_v1',
            params: params.map((p) => ({
              event_id: wire(p.event_id, zeros, asNumber),
              ticket_id: wire(p.ticket_id, zeros, asNumber),
              canceller: p.canceller,
            })),
          },
        };
        const sut = parseInstructionBatch(body, 5);
        if (!sut.ok) throw new Error(JSON.stringify(sut.problems));
        expect(sut.batch.params).toEqual(params);
        const canonical = canonicalBatchJson(sut.batch);
        const again = parseInstructionBatch(JSON.parse(canonical), 5);
        expect(again.ok && canonicalBatchJson(again.batch)).toBe(canonical);
      }),
    );
  });

  it('names the element and field of a u64 beyond 2^64-1 or an unsafe JSON integer', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: U64_MAX + 1n, max: U64_MAX * 10n }), (tooBig) => {
        const sut = parseInstructionBatch(
          {
            platformInstructions: {
              instruction: 'cancel_listing_v1',
              params: [
                { event_id: '1', ticket_id: '1', canceller: 'a' },
                { event_id: tooBig.toString(), ticket_id: 2 ** 53, canceller: 'a' },
              ],
            },
          },
          5,
        );
        expect(sut.ok ? [] : sut.problems.map((p) => p.field)).toEqual([
          'platformInstructions.params[1].event_id',
          'platformInstructions.params[1].ticket_id',
        ]);
      }),
    );
  });

  it('requires every required field of list_ticket_v2 and checks expires_at as i64', () => {
    const sut = parseInstructionBatch(
      {
        platformInstructions: {
          instruction: 'list_ticket_v2',
          params: [{ expires_at: '-9223372036854775809' }],
        },
      },
      5,
    );
    expect(
      sut.ok ? [] : sut.problems.map((p) => p.field.replace('platformInstructions.params[0].', '')),
    ).toEqual([
      'seller',
      'storage_fee_payer',
      'listing_integrator_identity',
      'listing_integrator_authority',
      'stablecoin_mint',
      'event_id',
      'ticket_id',
      'ask_price_minor',
      'payout_ata',
      'expires_at',
    ]);
  });

  it('keeps an explicit null optional address and omits an absent one', () => {
    const base = {
      seller: 's',
      storage_fee_payer: 'f',
      listing_integrator_identity: 'i',
      listing_integrator_authority: 'a',
      stablecoin_mint: 'm',
      event_id: '1',
      ticket_id: '2',
      ask_price_minor: '3',
      payout_ata: 'p',
      expires_at: '-4',
    };
    const withNull = parseInstructionBatch(
      { platformInstructions: { instruction: 'list_ticket_v2', params: [{ ...base, buyer_allow: null }] } },
      5,
    );
    const without = parseInstructionBatch(
      { platformInstructions: { instruction: 'list_ticket_v2', params: [base] } },
      5,
    );
    expect(withNull.ok && canonicalBatchJson(withNull.batch)).toContain('"buyer_allow":null');
    expect(without.ok && canonicalBatchJson(without.batch)).not.toContain('buyer_allow');
  });

  it('refuses an empty or oversized params array, unknown instructions and unknown top-level fields', () => {
    const p = { event_id: '1', ticket_id: '1', canceller: 'a' };
    expect(fields({ platformInstructions: { instruction: 'cancel_listing_v1', params: [] } })).toEqual([
      'platformInstructions.params',
    ]);
    expect(
      fields({
        platformInstructions: {
          instruction: 'cancel_listing_v1',
          params: [p, { ...p, ticket_id: '2' }, { ...p, ticket_id: '3' }],
        },
      }),
    ).toEqual(['platformInstructions.params']);
    expect(fields({ platformInstructions: { instruction: 'accept_offer_v1', params: [p] } })).toEqual([
      'platformInstructions.instruction',
    ]);
    expect(fields({ platformInstructions: { instruction: 'cancel_listing_v1', params: [p] }, x: 1 })).toEqual(
      ['x'],
    );
    expect(fields(null)).toEqual(['platformInstructions']);
  });
});
