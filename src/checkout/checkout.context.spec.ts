import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attemptOfKey, clientKeyHash, transactionKey, upstreamKeyOf } from './checkout.context';

/** Idempotency-Key header values (1..255 visible ASCII, inner spaces allowed). */
const clientKeys = fc.string({
  unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
  minLength: 1,
  maxLength: 255,
});
const attempts = fc.integer({ min: 1, max: 9999 });

describe(transactionKey.name, () => {
  it("derives a client_key order's attempt keys from the client key and attempt, not the row id", () => {
    fc.assert(
      fc.property(fc.uuid(), fc.uuid(), clientKeys, attempts, (idA, idB, idempotencyKey, attempt) => {
        const a = { id: idA, idempotencyKey, attempt, attemptKeys: 'client_key' as const };
        const b = { ...a, id: idB };
        expect(transactionKey(a)).toBe(transactionKey(b));
        expect(transactionKey({ ...a, attempt: attempt === 1 ? 2 : 1 })).not.toBe(transactionKey(a));
        // Within the ledger's key column whatever the client key's length.
        expect(transactionKey(a).length).toBeLessThanOrEqual(255);
      }),
    );
  });

  it('keeps the row-id keys of orders made before (order_id)', () => {
    expect(
      transactionKey({
        id: '0b7d1d3c-3f0e-4f52-9a53-0c9e0f6f4c11',
        idempotencyKey: 'k',
        attempt: 2,
        attemptKeys: 'order_id',
      }),
    ).toBe('checkout:0b7d1d3c-3f0e-4f52-9a53-0c9e0f6f4c11:2');
  });

  it('gives two client keys that differ two different keys', () => {
    fc.assert(
      fc.property(clientKeys, clientKeys, attempts, (k1, k2, attempt) => {
        fc.pre(k1 !== k2);
        const order = { id: 'x', attempt, attemptKeys: 'client_key' as const };
        expect(transactionKey({ ...order, idempotencyKey: k1 })).not.toBe(
          transactionKey({ ...order, idempotencyKey: k2 }),
        );
      }),
    );
  });
});

describe(attemptOfKey.name, () => {
  it('reads back the attempt and what names the order, for both kinds of keys', () => {
    fc.assert(
      fc.property(fc.uuid(), clientKeys, attempts, (id, idempotencyKey, attempt) => {
        expect(
          attemptOfKey(transactionKey({ id, idempotencyKey, attempt, attemptKeys: 'client_key' })),
        ).toEqual({
          attempt,
          clientKeyHash: clientKeyHash(idempotencyKey),
        });
        expect(
          attemptOfKey(transactionKey({ id, idempotencyKey, attempt, attemptKeys: 'order_id' })),
        ).toEqual({
          attempt,
          orderId: id,
        });
      }),
    );
  });

  it('names no order for keys checkout did not make', () => {
    for (const key of [
      'client-key-1',
      'checkout:0:' + 'a'.repeat(64),
      'checkout:1:' + 'A'.repeat(64),
      'sell:1:x',
    ])
      expect(attemptOfKey(key)).toBeNull();
  });
});

describe(upstreamKeyOf.name, () => {
  it("asks the transactions module for the key of the client and the attempt's ledger key", () => {
    const seen: [string, string][] = [];
    const sut = {
      upstreamKeyFor: (clientId: string, key: string) => (seen.push([clientId, key]), `up:${key}`),
    };
    const order = {
      id: 'i',
      clientId: 'c',
      idempotencyKey: 'order-7',
      attempt: 3,
      attemptKeys: 'client_key' as const,
    };
    expect(upstreamKeyOf(sut, order)).toBe(`up:${transactionKey(order)}`);
    expect(seen).toEqual([['c', transactionKey(order)]]);
  });
});
