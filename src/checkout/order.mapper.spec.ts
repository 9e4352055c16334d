import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OrderEntity, ORDER_STATES } from './order.entity';
import { isFinalState, money, STATE_MEANING, toOrderResponse } from './order.mapper';

function order(overrides: Partial<OrderEntity> = {}): OrderEntity {
  return Object.assign(new OrderEntity(), {
    id: '00000000-0000-4000-8000-000000000001',
    clientId: 'c',
    idempotencyKey: 'k',
    fingerprint: 'f',
    requestId: null,
    buyerSubject: 'alice',
    buyerAddress: 'addr',
    eventId: 18446744073709551615n,
    ticketId: 9007199254740993n,
    expectedPriceMinor: 1_500_000n,
    currentPriceMinor: null,
    stablecoinDecimals: null,
    state: 'created',
    recoveryPoint: 'revalidate',
    attempt: 1,
    batch: null,
    upstreamIdempotencyKey: null,
    transactionRecordId: null,
    custodialTransactionId: null,
    transactionSignature: null,
    upstreamStatus: null,
    previousAttempts: [],
    failureCode: null,
    failureReason: null,
    stepFailures: 0,
    lastError: null,
    nextAttemptAt: null,
    leaseOwner: null,
    leaseUntil: null,
    createdAt: new Date(0),
    attemptStartedAt: new Date(0),
    finalAt: null,
    updatedAt: new Date(0),
    ...overrides,
  });
}

describe(toOrderResponse.name, () => {
  const sut = toOrderResponse;

  it('keeps u64 ids exact and formats money with the order decimals, else the fallback', () => {
    const res = sut(order(), 6);
    expect(res).toMatchObject({
      event_id: '18446744073709551615',
      ticket_id: '9007199254740993',
      expected_price: { minor: '1500000', formatted: '1.5', decimals: 6 },
      final: false,
      failure: null,
      transaction: null,
    });
    expect(sut(order({ stablecoinDecimals: 2 }), 6).expected_price.formatted).toBe('15000');
    expect(sut(order(), null).expected_price.formatted).toBeNull();
  });

  it('shows the failure code and reason and the current price of a rejected order', () => {
    const res = sut(
      order({ state: 'rejected', failureCode: 'PRICE_CHANGED', failureReason: 'r', currentPriceMinor: 7n }),
      0,
    );
    expect(res).toMatchObject({
      final: true,
      failure: { code: 'PRICE_CHANGED', reason: 'r' },
      current_price: { formatted: '7' },
    });
  });

  it('every state has a meaning; only confirmed, landed_with_error, rejected and failed are final', () => {
    for (const state of ORDER_STATES) expect(STATE_MEANING[state].length).toBeGreaterThan(10);
    expect(ORDER_STATES.filter(isFinalState)).toEqual([
      'confirmed',
      'landed_with_error',
      'rejected',
      'failed',
    ]);
  });

  it('money: the formatted text reads back to the exact minor amount', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
        fc.integer({ min: 0, max: 18 }),
        (minor, decimals) => {
          const view = money(minor, decimals);
          const [whole = '', fraction = ''] = (view.formatted ?? '').split('.');
          expect(BigInt(whole + fraction.padEnd(decimals, '0'))).toBe(minor);
        },
      ),
    );
  });
});
