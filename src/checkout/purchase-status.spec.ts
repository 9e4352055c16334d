import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { interpretPurchaseStatus } from './purchase-status';

const record = (raw: Record<string, unknown>): Parameters<typeof interpretPurchaseStatus>[0] => ({
  status: typeof raw.status === 'string' ? raw.status : null,
  raw,
});

describe(interpretPurchaseStatus.name, () => {
  const sut = interpretPurchaseStatus;

  it('acts only on a known status of this key', () => {
    expect(sut(record({ idempotency_key: 'k', status: 'confirmed' }), 'k')).toBe('confirmed');
    expect(sut(record({ status: 'expired' }), 'k')).toBe('expired');
    expect(sut(record({ idempotency_key: 'k', status: 'landed_with_error' }), 'k')).toBe('landed_with_error');
    expect(sut(record({ idempotency_key: 'k', status: 'processing' }), 'k')).toBe('pending');
    expect(sut(record({ idempotency_key: 'k', status: 'signed' }), 'k')).toBe('pending');
  });

  it('a record that says nothing (empty, null, unknown status, another key) is unknown', () => {
    expect(sut(record({}), 'k')).toBe('unknown');
    expect(sut(record({ status: null }), 'k')).toBe('unknown');
    expect(sut(record({ status: 'CONFIRMED' }), 'k')).toBe('unknown');
    expect(sut(record({ idempotency_key: 'other', status: 'confirmed' }), 'k')).toBe('unknown');
  });

  it('never says confirmed for anything but an explicit confirmed status', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.string(), (raw, key) => {
        expect(sut(record(raw), key) !== 'confirmed' || raw.status === 'confirmed').toBe(true);
      }),
    );
  });
});
