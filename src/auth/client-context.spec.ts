import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../common/app-error';
import { assertOwnedBy } from './client-context';

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe(assertOwnedBy.name, () => {
  it('returns the record to its owner', () => {
    fc.assert(
      fc.property(fc.uuid(), fc.string(), (owner, data) => {
        const record = { clientId: owner, data };
        expect(assertOwnedBy(record, { id: owner })).toBe(record);
      }),
    );
  });

  it('answers anyone else with NOT_FOUND that reveals nothing (fast-check over client pairs)', () => {
    fc.assert(
      fc.property(fc.uuid(), fc.uuid(), fc.string(), (owner, other, data) => {
        fc.pre(other !== owner);
        const error = thrown(() => assertOwnedBy({ clientId: owner, data }, { id: other }, 'Order'));
        expect(error).toBeInstanceOf(AppError);
        expect(error).toMatchObject({ code: 'NOT_FOUND', message: 'Order not found', details: undefined });
        expect(JSON.stringify(error)).not.toContain(owner);
      }),
    );
  });

  it('treats a missing record exactly like somebody else’s', () => {
    const missing = thrown(() => assertOwnedBy(null, { id: 'a' }, 'Order')) as AppError;
    const foreign = thrown(() => assertOwnedBy({ clientId: 'b' }, { id: 'a' }, 'Order')) as AppError;
    expect([missing.code, missing.message]).toEqual([foreign.code, foreign.message]);
  });
});
