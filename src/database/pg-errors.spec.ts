import { describe, expect, it } from 'vitest';
import { isUniqueViolation } from './pg-errors';

describe(isUniqueViolation.name, () => {
  const violation = Object.assign(new Error('duplicate key'), { code: '23505', constraint: 'orders_key' });

  it('is a unique violation by its SQLSTATE, of any constraint when none is named', () => {
    expect(isUniqueViolation(violation)).toBe(true);
    expect(isUniqueViolation(Object.assign(new Error('fk'), { code: '23503' }))).toBe(false);
    expect(isUniqueViolation(new Error('no code'))).toBe(false);
    expect(isUniqueViolation(null)).toBe(false);
    expect(isUniqueViolation(undefined)).toBe(false);
  });

  it('names the constraint when asked to', () => {
    expect(isUniqueViolation(violation, 'orders_key')).toBe(true);
    expect(isUniqueViolation(violation, 'another_key')).toBe(false);
  });
});
